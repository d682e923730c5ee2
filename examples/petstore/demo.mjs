// Drives the generated Petstore server like an MCP client would: starts the local backend,
// launches server/dist/server.js over stdio with the official SDK Client, lists the tools and
// calls a few. Run via `npm run example` from the repository root (it builds everything first).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startBackend } from './backend.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const backend = await startBackend({ port: 0 });
console.log(`backend: ${backend.url}`);

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(here, 'server/dist/server.js')],
  env: { PATH: process.env.PATH ?? '', PETSTORE_BASE_URL: backend.url },
  stderr: 'inherit',
});
const client = new Client({ name: 'petstore-demo', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
console.log(`\ntools/list: ${tools.length} tools`);
for (const t of tools) console.log(`  ${t.name.padEnd(16)} ${t.title ?? ''}`);

const show = async (name, args) => {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  console.log(`\ntools/call ${name} ${JSON.stringify(args)}${res.isError ? '  -> isError' : ''}\n  ${text.replace(/\n/g, '\n  ')}`);
  return res;
};
await show('listPets', { status: 'available', limit: 10 });
await show('createPet', { body: { name: 'Fido', tag: 'dog', status: 'available' } });
await show('getPetById', { petId: 4 });
await show('getPetById', { petId: 'four' });
await show('getPetById', { petId: 404 });
await show('store_inventory', {});

await client.close();
backend.server.close();
console.log('\nbackend requests:', backend.requests.map((r) => `${r.method} ${r.path}${r.query}`).join(', '));
