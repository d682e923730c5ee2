// Drives the generated petstore-plus server like an MCP client: starts the Petstore backend,
// launches server/dist/server.js over stdio with the SDK Client, shows every primitive, calls
// an extra tool, renders a prompt, reads resources, then narrows the lists with a concern preset.
// Build first: node bin/mcpgen.js build examples/petstore-plus/mcpgen.yaml, then npm install &&
// npm run build in examples/petstore-plus/server.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { startBackend } from '../petstore/backend.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const backend = await startBackend({ port: 0 });
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(here, 'server/dist/server.js')],
  env: { PATH: process.env.PATH ?? '', PETSTORE_PLUS_BASE_URL: backend.url },
  stderr: 'inherit',
});
const client = new Client({ name: 'petstore-plus-demo', version: '1.0.0' });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => console.log('\n<- notifications/tools/list_changed'));
await client.connect(transport);

const show = async (title) => {
  const [tools, prompts, resources, templates] = await Promise.all([
    client.listTools(),
    client.listPrompts(),
    client.listResources(),
    client.listResourceTemplates(),
  ]);
  console.log(`\n${title}`);
  console.log(`  tools:     ${tools.tools.map((t) => t.name).join(', ')}`);
  console.log(`  prompts:   ${prompts.prompts.map((p) => p.name).join(', ')}`);
  console.log(`  resources: ${resources.resources.map((r) => r.uri).join(', ')}`);
  console.log(`  templates: ${templates.resourceTemplates.map((t) => t.uriTemplate).join(', ')}`);
};

console.log('concerns:', JSON.stringify(client.getServerCapabilities()?.experimental?.concerns?.declarations.map((d) => `${d.name}: ${d.values.join('|')}`)));
await show('everything (no preferences set):');

const fee = await client.callTool({ name: 'adoption_fee', arguments: { species: 'dog', ageYears: 9 } });
console.log('\ntools/call adoption_fee', JSON.stringify(fee.structuredContent));
const prompt = await client.getPrompt({ name: 'adopt_a_pet', arguments: { species: 'cat', budget: '120' } });
console.log('prompts/get adopt_a_pet:', JSON.stringify(prompt.messages[0].content.text));
const care = await client.readResource({ uri: 'petstore://species/rabbit/care' });
console.log('resources/read petstore://species/rabbit/care:', JSON.stringify(care.contents[0].text));

const updated = await client.request(
  { method: 'concerns/update', params: { preset: 'front-desk' } },
  z.looseObject({ concerns: z.record(z.string(), z.string()) }),
);
console.log('\nconcerns/update { preset: "front-desk" } ->', JSON.stringify(updated.concerns));
await show('as the front desk:');
try {
  await client.callTool({ name: 'deletePet', arguments: { petId: 1 } });
} catch (err) {
  console.log(`\ntools/call deletePet -> ${err.message}`);
}

await client.close();
backend.server.close();
