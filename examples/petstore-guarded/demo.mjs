// Drives the generated petstore-guarded server like an MCP host: starts the Petstore backend,
// runs the preprocessors on a user message with the shipped host helper, then deletes a pet
// through the reflection gate twice: as a host without sampling (hint -> prompts/get ->
// persist_justification -> retry, once per gate) and as a client whose "model" answers sampling
// requests. Justifications go to a temporary folder.
// Build first: node bin/mcpgen.js build examples/petstore-guarded/mcpgen.yaml, then npm install &&
// npm run build in examples/petstore-guarded/server.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startBackend } from '../petstore/backend.mjs';
import { runPreprocessors, toSystemContext } from './server/dist/runtime/preprocessors/preprocessors-host.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const backend = await startBackend({ port: 0 });
const store = mkdtempSync(path.join(os.tmpdir(), 'petstore-guarded-'));
const JUSTIFICATION = {
  intent: 'remove a record entered by mistake',
  alternatives: ['mark the pet sold', 'keep it'],
  choice: 'delete: the pet never existed',
  confidence: 0.9,
};

async function connect(name, model) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(here, 'server/dist/server.js')],
    env: { PATH: process.env.PATH ?? '', PETSTORE_GUARDED_BASE_URL: backend.url, PETSTORE_GUARDED_REFLECTION_DIR: store },
    stderr: 'inherit',
  });
  const client = new Client({ name, version: '1.0.0' }, model ? { capabilities: { sampling: {} } } : {});
  if (model) client.setRequestHandler(CreateMessageRequestSchema, model);
  await client.connect(transport);
  return client;
}

const host = await connect('petstore-guarded-host');
const message = 'Please delete Tom, he was entered twice.';
const { blocks } = await runPreprocessors(host, message);
console.log(`preprocessors on ${JSON.stringify(message)}:`);
for (const b of blocks) console.log(`  ${b.name}: ${b.status}${b.content ? ` ${b.content}` : ''}`);
console.log(`\ncontext for this turn only:\n${toSystemContext(blocks)}`);

console.log('\nhost flow (no sampling): tools/call deletePet { petId: 2 }');
for (;;) {
  const result = await host.callTool({ name: 'deletePet', arguments: { petId: 2 } });
  if (!result.isError) {
    console.log('  -> deleted');
    break;
  }
  const hint = result.structuredContent;
  if (!hint?.hash) throw new Error(result.content.map((c) => c.text).join('\n'));
  console.log(`  <- gate "${hint.domain}" (${hint.remaining} left): prompt ${hint.prompt} ${JSON.stringify(hint.prompt_args)}`);
  const prompt = await host.getPrompt({ name: hint.prompt, arguments: hint.prompt_args });
  console.log(`     prompts/get: ${JSON.stringify(prompt.messages[0].content.text.split('\n')[0])} ...`);
  const saved = await host.callTool({ name: 'persist_justification', arguments: { hash: hint.hash, domain: hint.domain, justification: JUSTIFICATION } });
  console.log(`     persist_justification: ${saved.content[0].text}`);
}

const asked = [];
const sampler = await connect('petstore-guarded-sampler', (request) => {
  asked.push(request.params.messages[0].content.text.split('\n')[0]);
  return { role: 'assistant', model: 'scripted', content: { type: 'text', text: JSON.stringify(JUSTIFICATION) } };
});
console.log('\nsampling flow: tools/call deletePet { petId: 3 }');
const deleted = await sampler.callTool({ name: 'deletePet', arguments: { petId: 3 } });
for (const q of asked) console.log(`  server asked the client's model: ${JSON.stringify(q)}`);
console.log(`  -> ${deleted.isError ? 'failed' : 'deleted'} in one tools/call`);

console.log(
  `\nstored justifications: ${readdirSync(store, { recursive: true })
    .filter((f) => String(f).endsWith('.json'))
    .join(', ')}`,
);
await Promise.all([host.close(), sampler.close()]);
backend.server.close();
rmSync(store, { recursive: true, force: true });
