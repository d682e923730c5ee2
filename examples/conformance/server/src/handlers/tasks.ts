// Handlers of the Tasks extension's fixtures of the MCP conformance suite (manifest `extraTools`
// with `task`). Yours to edit: mcpgen never overwrites them.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { ExtraToolContext } from '../runtime/handlers.js';

/** Waits `ms`, or rejects when the call (or its task) is cancelled. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('cancelled'));
    }, { once: true });
  });
}

/** greet: sync only. */
export function greet(args: { name: string }) {
  return { content: [{ type: 'text' as const, text: `Hello, ${args.name}!` }] };
}

/** slow_compute: `seconds` of work (0: at once); tasks/cancel aborts it. */
export async function slowCompute(args: { seconds: number; label?: string }, ctx: ExtraToolContext) {
  await sleep(args.seconds * 1000, ctx.signal);
  return { content: [{ type: 'text' as const, text: `Computed ${args.label ?? 'result'} after ${args.seconds} s` }] };
}

/** failing_job: a tool error (isError) after a moment. */
export async function failingJob(_args: Record<string, never>, ctx: ExtraToolContext) {
  await sleep(300, ctx.signal);
  return { isError: true, content: [{ type: 'text' as const, text: 'failing_job failed, as it always does' }] };
}

/** protocol_error_job: a JSON-RPC error, which ends its task `failed` with that error. */
export async function protocolErrorJob(_args: Record<string, never>, ctx: ExtraToolContext): Promise<never> {
  await sleep(100, ctx.signal);
  throw new ProtocolError(ProtocolErrorCode.InternalError, 'protocol_error_job failed with a protocol error, as it always does');
}

/** confirm_delete: asks the user to confirm (its task waits input_required until tasks/update answers). */
export async function confirmDelete(args: { filename: string }, ctx: ExtraToolContext) {
  const answer = await ctx.elicit(`Delete ${args.filename}?`, { properties: { confirm: { type: 'boolean', description: 'Delete it' } }, required: ['confirm'] });
  const yes = answer.action === 'accept' && answer.content.confirm === true;
  return { content: [{ type: 'text' as const, text: yes ? `Deleted ${args.filename}` : `Kept ${args.filename}` }] };
}

/** multi_input: two questions at once (two keys pending together). */
export async function multiInput(_args: Record<string, never>, ctx: ExtraToolContext) {
  const form = { properties: { name: { type: 'string' as const }, confirm: { type: 'boolean' as const } } };
  const [first, second] = await Promise.all([ctx.elicit('First answer?', form, { key: 'first' }), ctx.elicit('Second answer?', form, { key: 'second' })]);
  const name = (a: typeof first) => (a.action === 'accept' ? String(a.content.name ?? '') : a.action);
  return { content: [{ type: 'text' as const, text: `Got ${name(first)} and ${name(second)}` }] };
}

/** test_tool_with_task: the name is asked in an input-required round; once answered, the call becomes a task. */
export async function toolWithTask(_args: Record<string, never>, ctx: ExtraToolContext) {
  const answer = await ctx.elicit('What is your name?', { properties: { name: { type: 'string' } }, required: ['name'] }, { key: 'user_name' });
  const name = answer.action === 'accept' ? String(answer.content.name) : 'stranger';
  ctx.runAsTask();
  await sleep(200, ctx.signal);
  return { content: [{ type: 'text' as const, text: `Hello, ${name}!` }] };
}
