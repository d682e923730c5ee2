/**
 * Prompts registered in code, beside the manifest's (manifest `entry: custom`). mcpgen wrote this
 * file once and never overwrites it: it is yours.
 *
 * test_input_required_result_prompt (input-required-result-non-tool-request, SEP-2322): a prompt
 * whose handler asks the user for context before it renders. A 2026-07-28 client gets an
 * InputRequiredResult with an `elicitation/create` under `user_context`, answers it and gets the
 * prompt again with the answer; for a legacy client the SDK sends the elicitation and runs the
 * handler again with the answer.
 */
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type { LibraryServer } from './index.js';

export async function register(server: LibraryServer): Promise<void> {
  server.registerPrompt({
    name: 'test_input_required_result_prompt',
    description: 'Asks the user for context, then renders a prompt with it (input-required-result-non-tool-request).',
    handler: (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_context');
      if (answer.kind !== 'elicit') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            }),
          },
        });
      }
      const context = answer.action === 'accept' && typeof answer.content?.context === 'string' ? answer.content.context : '(none given)';
      return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${context}` } }] };
    },
  });
}
