/**
 * The OAuth scopes of nested calls, as a step of the pipeline (oauth/oauth-scopes.ts says what a
 * tool needs; dispatch.ts puts this step in the order of nested and code calls).
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { missingScopes } from '../oauth/oauth-scopes.js';
import type { Step } from './pipeline.js';
import { refuse } from './pipeline.js';

/**
 * The step of a nested call (an operation a handler runs through `ctx.api`): refused, like an
 * access rule's denial (audited as `tool.denied`, the handler gets `{ ok: false }`), when the
 * request's OAuth token lacks a scope the operation's tool needs. Outer calls pass: http.ts
 * refused those already.
 */
export const nestedScopes: Step = (call, next) => {
  if (call.parent === undefined || call.target.kind !== 'operation') return next();
  const needs = call.target.tool.scopes;
  const missing = missingScopes(needs, call.ctx.http?.authInfo);
  if (missing.length === 0) return next();
  const reason = `the tool ${call.name} needs the scope${needs!.length > 1 ? 's' : ''} ${needs!.join(' ')}; the OAuth token lacks ${missing.join(' ')}`;
  const error = new ProtocolError(ProtocolErrorCode.InvalidParams, reason[0]!.toUpperCase() + reason.slice(1), { tool: call.name, missing });
  return Promise.reject(refuse(error, { kind: 'denied', reason }));
};
