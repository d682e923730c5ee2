/**
 * What handler code imports from the runtime, in one module whose path stays put: a handler
 * file in `src/handlers/` imports `ExtraToolContext` and the rest from `../runtime/handlers.js`. The
 * modules behind it live in folders and may move between versions; this file follows them, so
 * the handler files you wrote keep compiling after `mcpgen build`. Import from here only.
 */

// biome-ignore-all assist/source/organizeImports: grouped by what handler code does, each group under its comment

// errors a handler may throw or catch: a ProtocolError fails the call with that JSON-RPC error
// (rather than an `isError` result); asking a client for what it did not declare throws
// MissingRequiredClientCapabilityError
export { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

// resources, resource templates and completions
export type { RequestExtra } from './core/primitive-gate.js';
export type { CompletionContext } from './primitives/completion.js';
export type { ResourceContent, Variables } from './primitives/resources.js';

// preprocessors
export type { PreprocessorContext } from './preprocessors/preprocessors.js';

// telling clients that something changed
export { notifyResourceUpdated } from './primitives/subscriptions.js';
export type { ListKind } from './server/list-changes.js';
export { notifyListChanged } from './server/list-changes.js';

// extra tools: the handler's context (`ctx`), its `ctx.api` calls and its questions to the client
export type { ApiClient, ApiOperation, ApiResult } from './tools/api-client.js';
export type { ClientLog, ClientProgress, ExtraToolContext } from './tools/extra-tools.js';
export type { ElicitAnswer, ElicitForm, ElicitUrlAnswer, HandlerInput, InputKind, InputOptions, SampleAnswer } from './tools/handler-input.js';
export { InputRequestFailed } from './tools/handler-input.js';
