/**
 * The entry of one tool call into the pipeline: the tool found (or refused with -32602), the
 * arguments measured before anything walks them, an input round's `requestState` checked to
 * continue exactly its own call and only once, the pipeline's `ToolCall` built and run, and the
 * state of the next round sealed into an input-required result.
 */
import { randomUUID } from 'node:crypto';
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { measureArguments, overLimitMessage } from '../operation/argument-limits.js';
import type { Dispatch } from '../pipeline/dispatch.js';
import type { PipelineTool, ToolCall, ToolResult } from '../pipeline/pipeline.js';
import { isInputRequired, runPipeline } from '../pipeline/pipeline.js';
import { settingNames } from '../process/variables.js';
import { SharedStateError } from '../shared/shared-state.js';
import type { TaskTools } from '../tasks/tasks-tools.js';
import { invalidParams } from './instance.js';
import type { RoundNonces } from './round-nonces.js';
import { belongsTo, hasNonce, ROUND_STATE_TTL_MS, roundOf, sealRound } from './rounds.js';
import type { InstanceContext } from './server-types.js';
import type { ToolTable } from './tool-table.js';

/** What `createServer` builds once for the tool calls of all its instances. */
export type ToolServing = Dispatch & {
  readonly table: ToolTable;
  /** The environment prefix (named in the message of over-long arguments). */
  readonly envPrefix: string;
  readonly maxArgumentBytes: number;
  /** HMAC key of input rounds' state. */
  readonly stateKey: Buffer;
  readonly roundNonces: RoundNonces;
  /** Identity of clients that bring none. */
  readonly defaultIdentity: string;
  /** Tools that run as MCP tasks (tasks-tools.ts). */
  readonly taskTools?: TaskTools;
};

/** One server instance as its tool calls see it. */
export type ToolInstance = {
  readonly server: Server;
  readonly instance: InstanceContext;
  /** The instance's gate: filters `tools/list`, guards `tools/call`. */
  readonly gate: PrimitiveGate;
};

/** The identity of the client of a request: its HTTP token's, else the instance's, else the server's default. */
export function identityOf(serving: ToolServing, instance: InstanceContext, ctx: ServerContext): string {
  return ctx.http?.authInfo?.clientId ?? instance.identity ?? serving.defaultIdentity;
}

/** Runs one tool call through the pipeline, carrying its logical call across input rounds. */
export async function callTool(
  serving: ToolServing,
  { server, instance, gate }: ToolInstance,
  name: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
  viaCallTool?: string,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const { table, roundNonces, stateKey } = serving;
  const code = table.code;
  // code mode's execute: the pipeline's call carries what the audit may keep (the code's hash); the code rides in the target
  const target: PipelineTool | undefined = code && name === code.executeName && !table.byName.has(name) ? { kind: 'code', name, args } : table.byName.get(name);
  if (!target) {
    if (table.preprocessors.has(name))
      throw invalidParams(
        `${name} is a preprocessor, not a tool: a host runs preprocessors with preprocessors/run, or gets their context from the with_context prompt`,
      );
    throw invalidParams(`Unknown tool: ${name}`);
  }
  // before anything else walks them: the audit trail, access control, validation, the gate
  const size = measureArguments(args, serving.maxArgumentBytes);
  if (!size.fits) throw invalidParams(overLimitMessage(name, size, settingNames(serving.envPrefix).maxArgumentBytes));
  const identity = identityOf(serving, instance, ctx);
  const round = roundOf(ctx.mcpReq.requestState());
  // a sealed state continues exactly the call it was issued for: the same tool, client and
  // arguments (else a client could replay one to pass off a new call as a later round, which
  // skips what runs once per call: its audit line, its rate count)
  if (round && !belongsTo(round, name, identity, args)) {
    throw invalidParams(`Invalid requestState: it belongs to another call (tool, client or arguments differ); retry the call without it`);
  }
  // …and continues it once: resending a later round would run it again (its writes too)
  if (round) {
    if (!hasNonce(round)) throw invalidParams('Invalid requestState: not the state of a tool call; retry the call without it');
    let claim: Awaited<ReturnType<RoundNonces['claim']>>;
    try {
      claim = await roundNonces.claim(round.nonce, ROUND_STATE_TTL_MS);
    } catch (err) {
      if (!(err instanceof SharedStateError)) throw err;
      log('warn', `${name}: cannot check that requestState is used once: ${err.message}`);
      return {
        isError: true,
        content: [{ type: 'text', text: `Cannot continue this call of ${name}: ${err.message}; its requestState was not used, send it again shortly` }],
      };
    }
    if (claim === 'used') {
      log('warn', `${name}: refused a requestState that was already used (call ${round.callId}, client ${identity})`);
      throw invalidParams('Invalid requestState: this requestState was already used (each continues its call once); start the call again without it');
    }
    if (claim === 'full') {
      log('warn', `${name}: refused an input round: too many rounds answered in the last ${ROUND_STATE_TTL_MS / 60_000} minutes to remember them all`);
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `Cannot continue this call of ${name}: the server is answering too many input rounds at once; its requestState was not used, send it again shortly`,
          },
        ],
      };
    }
  }
  const headers = ctx.http?.req?.headers ?? instance.headers;
  const call: ToolCall = {
    name,
    target,
    args: target.kind === 'code' ? code!.auditArguments(args) : args,
    argumentBytes: size.bytes,
    server,
    ctx,
    era: instance.era,
    identity,
    callId: round ? round.callId : randomUUID(),
    firstRound: !round,
    state: round && typeof round.state === 'object' && round.state !== null ? { ...round.state } : {},
    signal: signal ?? ctx.mcpReq.signal,
    gate,
    ...(headers ? { headers } : {}),
    ...(viaCallTool !== undefined ? { viaCallTool } : {}),
  };
  const { result } = await runPipeline(serving.steps, serving.dispatch, call);
  // (execute's round state is bound to its arguments as sent, not to what the audit keeps of them)
  if (isInputRequired(result)) return { ...result, requestState: sealRound(stateKey, target.kind === 'code' ? { ...call, args } : call) };
  return result;
}
