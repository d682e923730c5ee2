// The runtime's floor for the HTTP rows of `npm run bench` (bench/http.mjs): a bare server written
// with the v2 SDK alone, serving one tool, getPetById, that does the same `fetch` of the Petstore
// backend as the generated server's tool and returns the pet as text — no argument validation, no
// pipeline, no result shaping, no logging. Served as the generated server serves (runtime/transport/http.ts):
// 2026-07-28 requests statelessly through the SDK's createMcpHandler (a server per request), 2025-era
// requests through a sessionful NodeStreamableHTTPServerTransport (a server per session), told
// apart by the SDK's isLegacyRequest. What the generated server's CPU per call is over this one's is
// what mcpgen adds to the SDK.
//
// Usage: PETSTORE_BASE_URL=http://127.0.0.1:4010 node bench/floor-server.mjs  (listens on a free
// loopback port; prints `Streamable HTTP at http://127.0.0.1:<port>/mcp` on stderr)
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, Server } from '@modelcontextprotocol/server';

const base = process.env.PETSTORE_BASE_URL;
if (!base) throw new Error('PETSTORE_BASE_URL is not set');

const TOOL = {
  name: 'getPetById',
  description: 'Find pet by ID',
  inputSchema: { type: 'object', properties: { petId: { type: 'integer' } }, required: ['petId'] },
};

function makeServer() {
  const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: [TOOL] }));
  server.setRequestHandler('tools/call', async (request) => {
    const res = await fetch(`${base}/pets/${encodeURIComponent(String(request.params.arguments?.petId))}`);
    return { content: [{ type: 'text', text: await res.text() }], isError: !res.ok };
  });
  return server;
}

const modern = toNodeHandler(createMcpHandler(() => makeServer(), { legacy: 'reject' }));
const sessions = new Map();

const http = createServer(async (req, res) => {
  try {
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    if (!(await isLegacyRequest(new Request(`http://localhost${req.url}`, { method: req.method, headers }), body))) return void (await modern(req, res, body));
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const transport = sessions.get(sid);
      if (!transport) return void res.writeHead(404).end();
      return void (await transport.handleRequest(req, res, body));
    }
    if (!isInitializeRequest(body)) return void res.writeHead(400).end();
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await makeServer().connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (error) {
    process.stderr.write(`floor: ${error instanceof Error ? error.stack : String(error)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  }
});
http.listen(0, '127.0.0.1', () => process.stderr.write(`Streamable HTTP at http://127.0.0.1:${http.address().port}/mcp\n`));
process.on('SIGTERM', () => http.close(() => process.exit(0)));
