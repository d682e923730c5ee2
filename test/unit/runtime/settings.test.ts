import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import { resolveSettings, SettingsError } from '../../../templates/runtime/process/settings.js';

const config: ServerConfig = {
  name: 'pets',
  version: '1.0.0',
  envPrefix: 'PETS',
  baseUrl: 'https://pets.example.com/api/v3/',
  timeoutMs: 30000,
  maxResponseBytes: 1000000,
};

function settingsError(fn: () => unknown): SettingsError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SettingsError) return err;
    throw err;
  }
  throw new Error('expected a SettingsError');
}

describe('resolveSettings', () => {
  it('uses the manifest values when no variable is set (base URL without trailing slash)', () => {
    expect(resolveSettings(config, {})).toEqual({
      baseUrl: 'https://pets.example.com/api/v3',
      timeoutMs: 30000,
      maxResponseBytes: 1000000,
      maxInFlightBytes: 67108864,
      maxArgumentBytes: 1048576,
      envPrefix: 'PETS',
    });
  });

  it('lets environment variables override the manifest', () => {
    const s = resolveSettings(config, {
      PETS_BASE_URL: 'http://127.0.0.1:8080/v2',
      PETS_TIMEOUT_MS: '1500',
      PETS_MAX_RESPONSE_BYTES: ' 2048 ',
      OTHER_BASE_URL: 'x',
    });
    expect(s).toEqual({
      baseUrl: 'http://127.0.0.1:8080/v2',
      timeoutMs: 1500,
      maxResponseBytes: 2048,
      maxInFlightBytes: 67108864,
      maxArgumentBytes: 1048576,
      envPrefix: 'PETS',
    });
  });

  it('treats blank variables as unset', () => {
    expect(resolveSettings(config, { PETS_BASE_URL: '  ', PETS_TIMEOUT_MS: '' }).timeoutMs).toBe(30000);
  });

  it('leaves the base URL unset when neither source has one', () => {
    const { baseUrl: _drop, ...noBase } = config;
    expect(resolveSettings(noBase, {}).baseUrl).toBeUndefined();
  });

  it.each([
    ['PETS_TIMEOUT_MS', 'abc', /PETS_TIMEOUT_MS must be a positive whole number of milliseconds/],
    ['PETS_TIMEOUT_MS', '0', /PETS_TIMEOUT_MS must be a positive whole number/],
    ['PETS_TIMEOUT_MS', '1.5', /PETS_TIMEOUT_MS/],
    ['PETS_TIMEOUT_MS', '-5', /PETS_TIMEOUT_MS/],
    ['PETS_MAX_RESPONSE_BYTES', '10kb', /PETS_MAX_RESPONSE_BYTES must be a positive whole number of bytes/],
    ['PETS_BASE_URL', 'pets.example.com', /PETS_BASE_URL must be an absolute http:\/\/ or https:\/\/ URL/],
    ['PETS_BASE_URL', 'ftp://pets.example.com', /PETS_BASE_URL .*got scheme "ftp"/],
    ['PETS_BASE_URL', 'https://user:pw@pets.example.com', /without user name or password/],
    ['PETS_BASE_URL', 'https://pets.example.com/?key=1', /without a query/],
  ])('rejects %s=%j naming the variable and the expected form', (name, value, message) => {
    const err = settingsError(() => resolveSettings(config, { [name]: value }));
    expect(err.variable).toBe(name);
    expect(err.message).toMatch(message);
  });

  it('rejects a relative manifest base URL, pointing at the variable that fixes it', () => {
    const err = settingsError(() => resolveSettings({ ...config, baseUrl: '/api/v3' }, {}));
    expect(err.variable).toBe('PETS_BASE_URL');
    expect(err.message).toMatch(/set PETS_BASE_URL/);
    // ...and the variable indeed fixes it
    expect(resolveSettings({ ...config, baseUrl: '/api/v3' }, { PETS_BASE_URL: 'http://h/api/v3' }).baseUrl).toBe('http://h/api/v3');
  });
});
