// The example's local Petstore backend: node:http on 127.0.0.1, pets kept in memory.
// Implements examples/petstore/openapi.yaml. Run: node backend.mjs [port]  (default 4010)
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const STATUSES = ['available', 'pending', 'sold'];

/** Starts the backend; resolves to { url, server, requests } where requests records every call. */
export function startBackend({ port = 4010, host = '127.0.0.1' } = {}) {
  const pets = new Map([
    [1, { id: 1, name: 'Rex', tag: 'dog', status: 'available' }],
    [2, { id: 2, name: 'Tom', tag: 'cat', status: 'pending' }],
    [3, { id: 3, name: 'Nemo', tag: 'fish', status: 'sold', category: { name: 'fish', parent: { name: 'animals' } } }],
  ]);
  let nextId = 4;
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url, 'http://backend');
      requests.push({ method: req.method, path: url.pathname, query: url.search, headers: req.headers, body });
      const send = (status, value) => {
        res.writeHead(status, value === undefined ? {} : { 'content-type': 'application/json' });
        res.end(value === undefined ? undefined : JSON.stringify(value));
      };
      const error = (status, message) => send(status, { code: status, message });
      const readPet = () => {
        try {
          const pet = JSON.parse(body);
          if (typeof pet !== 'object' || pet === null || typeof pet.name !== 'string' || pet.name === '') return undefined;
          if (pet.status !== undefined && !STATUSES.includes(pet.status)) return undefined;
          return pet;
        } catch {
          return undefined;
        }
      };
      const m = /^\/pets\/([^/]+)$/.exec(url.pathname);
      if (url.pathname === '/pets' && req.method === 'GET') {
        const limit = Number(url.searchParams.get('limit') ?? 20);
        const status = url.searchParams.get('status');
        const tags = url.searchParams.getAll('tags');
        const all = [...pets.values()].filter((p) => (!status || p.status === status) && (tags.length === 0 || tags.includes(p.tag)));
        return send(200, { items: all.slice(0, limit), total: all.length });
      }
      if (url.pathname === '/pets' && req.method === 'POST') {
        const pet = readPet();
        if (!pet) return error(400, 'a pet needs a non-empty name and a known status');
        const stored = { ...pet, id: nextId++ };
        pets.set(stored.id, stored);
        return send(201, stored);
      }
      if (m) {
        const id = Number(decodeURIComponent(m[1]));
        if (!Number.isInteger(id)) return error(400, `invalid pet id ${m[1]}`);
        if (!pets.has(id)) return error(404, `pet ${id} not found`);
        if (req.method === 'GET') return send(200, pets.get(id));
        if (req.method === 'PUT') {
          const pet = readPet();
          if (!pet) return error(400, 'a pet needs a non-empty name and a known status');
          pets.set(id, { ...pet, id });
          return send(200, pets.get(id));
        }
        if (req.method === 'DELETE') {
          pets.delete(id);
          return send(204);
        }
      }
      if (url.pathname === '/store/inventory' && req.method === 'GET') {
        const counts = Object.fromEntries(STATUSES.map((s) => [s, [...pets.values()].filter((p) => p.status === s).length]));
        return send(200, counts);
      }
      return error(404, `no route for ${req.method} ${url.pathname}`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({ url: `http://${host}:${actual}`, server, requests });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { url } = await startBackend({ port: Number(process.argv[2] ?? 4010) });
  console.log(`petstore backend listening on ${url}`);
}
