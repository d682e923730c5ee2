/**
 * A recording HTTP proxy on 127.0.0.1: forwards every request to `target` unchanged and notes
 * the upstream status of each, so a test knows what the API answered to each tool call.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request seen by the proxy: its method and path, and the upstream status (0 when the upstream could not be reached). */
export type Exchange = { method: string; path: string; status: number };

export type RecordingProxy = {
  url: string;
  /** Every exchange so far, in order of arrival; the test may empty it between calls. */
  exchanges: Exchange[];
  close: () => Promise<void>;
};

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const exchange: Exchange = { method: req.method ?? '?', path: req.url ?? '', status: 0 };
    exchanges.push(exchange);
    const headers = { ...req.headers, host: upstream.host };
    const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (up) => {
      exchange.status = up.statusCode ?? 0;
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`recording proxy: ${err.message}`);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
