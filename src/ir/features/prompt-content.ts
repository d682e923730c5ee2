/**
 * Messages of manifest prompts → IR: `text` (a Handlebars template), `image` and `audio` (files
 * embedded at build time), `resource` (a declared resource read when the prompt is got, or a URI
 * with `text` or an embedded `file`) and `resourceLink`. Templates are checked against the
 * prompt's arguments; files go through the same checks as `file` resources (inside the
 * manifest's folder, regular files) and a size bound.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import type { PromptMessage, Resource } from '../../manifest/types.gen.js';
import type { IrPromptMessage } from '../types.js';
import { guessMimeType, isTextualMime } from './mime.js';
import { checkPromptTemplate } from './prompt-template.js';

/** Largest file a prompt message embeds (bytes): prompts are sent whole on every `prompts/get`. */
export const MAX_PROMPT_FILE_BYTES = 1024 * 1024;

/** The content keys of a prompt message; exactly one is given. */
const CONTENT_KEYS = ['text', 'image', 'audio', 'resource', 'resourceLink'] as const;

/** What {@link buildPromptMessage} needs besides the message. */
export type PromptMessageContext = {
  prompt: string;
  index: number;
  /** Manifest pointer of the message. */
  at: string;
  argNames: readonly string[];
  /** The manifest's fixed-URI resources, by URI. */
  resources: ReadonlyMap<string, Resource>;
  /** Reads a file relative to the manifest (checked; reports and returns undefined on failure). */
  readFile: (file: string, at: Location, maxBytes: number) => Buffer | undefined;
  locateManifest: (pointer: string) => Location;
  diagnostics: Diagnostics;
};

/** The bytes as text when they are valid UTF-8 (without a byte-order mark), else undefined. */
export function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Builds one message; problems go to `diagnostics` (and the message is left out). */
export function buildPromptMessage(msg: PromptMessage, ctx: PromptMessageContext): IrPromptMessage | undefined {
  const { diagnostics, locateManifest, at } = ctx;
  const role = msg.role ?? 'user';
  const what = `message ${ctx.index} of prompt ${JSON.stringify(ctx.prompt)}`;
  const given = CONTENT_KEYS.filter((k) => msg[k] !== undefined);
  if (given.length !== 1) {
    diagnostics.error(
      'MCPGEN_PROMPT_CONTENT',
      given.length === 0 ? `${what} has no content` : `${what} gives ${given.map((k) => `\`${k}\``).join(' and ')}`,
      'give exactly one of `text`, `image`, `audio`, `resource` and `resourceLink`',
      locateManifest(at),
    );
    return undefined;
  }
  const template = (text: string, pointer: string): void => {
    const check = checkPromptTemplate(text, ctx.argNames);
    const where = locateManifest(pointer);
    if (check.error !== undefined) {
      diagnostics.error(
        'MCPGEN_PROMPT_TEMPLATE_INVALID',
        `${what} is not a valid template: ${check.error}`,
        'fix the Handlebars template; use `{{argument}}` and the built-in `if`, `unless`, `each`, `with`, `lookup` helpers only',
        where,
      );
    }
    for (const v of check.unknownVariables) {
      const declared = ctx.argNames.length > 0 ? `declared arguments: ${ctx.argNames.join(', ')}` : 'the prompt declares no arguments';
      diagnostics.warn(
        'MCPGEN_PROMPT_UNKNOWN_VARIABLE',
        `${what} uses {{${v}}}, which is not an argument (${declared})`,
        `declare \`${v}\` under \`arguments\`, or fix the spelling`,
        where,
      );
    }
  };
  if (msg.text !== undefined) {
    template(msg.text, `${at}/text`);
    return { role, text: msg.text };
  }
  const media = msg.image ?? msg.audio;
  if (media !== undefined) {
    const key = msg.image !== undefined ? 'image' : 'audio';
    const bytes = ctx.readFile(media.file, locateManifest(`${at}/${key}/file`), MAX_PROMPT_FILE_BYTES);
    if (bytes === undefined) return undefined;
    const mimeType = media.mimeType ?? guessMimeType(media.file);
    if (!mimeType.startsWith(`${key}/`)) {
      diagnostics.error(
        'MCPGEN_PROMPT_CONTENT',
        `${what}: ${media.file} is ${mimeType}, not ${key === 'image' ? 'an image' : 'audio'}`,
        `give \`mimeType: ${key}/…\` or use a file with an ${key} extension`,
        locateManifest(`${at}/${key}`),
      );
      return undefined;
    }
    const data = { data: bytes.toString('base64'), mimeType };
    return key === 'image' ? { role, image: data } : { role, audio: data };
  }
  if (msg.resource !== undefined) {
    const r = msg.resource;
    const p = `${at}/resource`;
    if (r.text !== undefined && r.file !== undefined) {
      diagnostics.error(
        'MCPGEN_PROMPT_CONTENT',
        `${what}: the resource gives both \`text\` and \`file\``,
        'give one of them, or neither to embed the declared resource `uri` names',
        locateManifest(p),
      );
      return undefined;
    }
    if (r.text === undefined && r.file === undefined) {
      const declared = ctx.resources.get(r.uri);
      if (declared === undefined) {
        const known = [...ctx.resources.keys()];
        diagnostics.error(
          'MCPGEN_PROMPT_CONTENT',
          `${what}: ${JSON.stringify(r.uri)} is not one of \`resources\``,
          known.length > 0
            ? `name one of ${known.join(', ')}, or give the content with \`text\` or \`file\``
            : 'declare it under `resources`, or give the content with `text` or `file`',
          locateManifest(`${p}/uri`),
        );
        return undefined;
      }
      return { role, resource: { uri: r.uri, read: true } };
    }
    template(r.uri, `${p}/uri`);
    if (r.text !== undefined) {
      template(r.text, `${p}/text`);
      return { role, resource: { uri: r.uri, text: r.text, ...(r.mimeType !== undefined ? { mimeType: r.mimeType } : {}) } };
    }
    const bytes = ctx.readFile(r.file!, locateManifest(`${p}/file`), MAX_PROMPT_FILE_BYTES);
    if (bytes === undefined) return undefined;
    const mimeType = r.mimeType ?? guessMimeType(r.file!);
    const text = isTextualMime(mimeType) ? utf8(bytes) : undefined;
    return { role, resource: { uri: r.uri, mimeType, ...(text !== undefined ? { text } : { blob: bytes.toString('base64') }) } };
  }
  const link = msg.resourceLink!;
  const declared = ctx.resources.get(link.uri);
  const name = link.name ?? declared?.name;
  if (name === undefined) {
    diagnostics.error(
      'MCPGEN_PROMPT_CONTENT',
      `${what}: the resource link to ${JSON.stringify(link.uri)} has no name`,
      'give `name`, or link to one of `resources`',
      locateManifest(`${at}/resourceLink`),
    );
    return undefined;
  }
  const out: { uri: string; name: string; title?: string; description?: string; mimeType?: string } = { uri: link.uri, name };
  const title = link.title ?? declared?.title;
  const description = link.description ?? declared?.description;
  const mimeType = link.mimeType ?? declared?.mimeType ?? (declared?.file !== undefined ? guessMimeType(declared.file) : undefined);
  if (title !== undefined) out.title = title;
  if (description !== undefined) out.description = description;
  if (mimeType !== undefined) out.mimeType = mimeType;
  return { role, resourceLink: out };
}
