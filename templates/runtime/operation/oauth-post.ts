/**
 * The one way the server posts to an authorization server's endpoints (token, token exchange,
 * introspection): a form body, the server's client credentials in HTTP Basic (each part
 * form-encoded first, RFC 6749 §2.3.1), JSON asked for, no redirect followed (the secret goes to
 * this endpoint only), a timeout, and the answer read up to 64 KiB. Callers word the failures.
 */
import { readBounded } from './body.js';

/** Largest answer read from an authorization server. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** What the endpoint answered. */
export type FormAnswer = { status: number; ok: boolean; text: string };

/** The request could not be made or no answer came: `timedOut` tells which. */
export class FormPostFailure extends Error {
  constructor(
    readonly timedOut: boolean,
    options: { cause: unknown },
  ) {
    super(timedOut ? 'timed out' : 'failed', options);
  }
}

/** `value` as `application/x-www-form-urlencoded` writes it (space as `+`). */
export function formEncode(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

/** Posts `form` to `url` as client `clientId`; throws {@link FormPostFailure} when no answer is read. */
export async function postClientForm(
  url: string,
  o: { clientId: string; clientSecret: string; form: URLSearchParams; timeoutMs: number; fetch?: typeof fetch },
): Promise<FormAnswer> {
  const basic = Buffer.from(`${formEncode(o.clientId)}:${formEncode(o.clientSecret)}`, 'utf8').toString('base64');
  try {
    const res = await (o.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: o.form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    const text = new TextDecoder().decode((await readBounded(res, MAX_ANSWER_BYTES)).bytes);
    return { status: res.status, ok: res.ok, text };
  } catch (err) {
    throw new FormPostFailure(err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'), { cause: err });
  }
}
