/**
 * Results that fit on the corpus' Kubernetes description: `listCoreV1NamespacedPod` against a
 * local backend answering a large PodList (200 pods, real-shaped, about 420 KB), through the SDK
 * `Client` over stdio with default result settings. The result is under the 8,000-token budget
 * (o200k, counted), every pod shown keeps its name and namespace, and the note says how many pods
 * there are and how to page (Kubernetes' `limit`). Then 100 such calls at once: every call ends
 * (a result, or the in-flight refusal that says to retry), pings are answered, and the server's
 * peak memory stays bounded.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import { buildServer, type Connected, connect, pingMs } from '../helpers/generated-server.js';

/** A pod as the API server sends one: labels, annotations, managed fields, containers, status. */
function pod(i: number): Record<string, unknown> {
  return {
    metadata: {
      name: `web-${i}-7d9c6b5f4-x${i}`,
      generateName: 'web-7d9c6b5f4-',
      namespace: 'shop',
      uid: `8f1a${String(i).padStart(4, '0')}-2c3d-4e5f-8a9b-0c1d2e3f4a5b`,
      resourceVersion: String(100000 + i),
      creationTimestamp: '2026-11-20T10:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d9c6b5f4', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-20T09:59:00Z', 'prometheus.io/scrape': 'true' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9c6b5f4', uid: 'aa', controller: true, blockOwnerDeletion: true }],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-20T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:ports': {} } } },
          },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/shop/web:1.42.0',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          env: [{ name: 'MODE', value: 'production' }],
          volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      nodeName: `node-${i % 5}`,
      serviceAccountName: 'default',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-20T10:00:10Z' }],
      hostIP: `10.0.0.${i % 5}`,
      podIP: `10.244.${i % 5}.${i % 250}`,
      startTime: '2026-11-20T10:00:00Z',
      containerStatuses: [
        {
          name: 'web',
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/shop/web:1.42.0',
          imageID: 'registry.example.com/shop/web@sha256:0123456789abcdef',
          containerID: `containerd://${'f'.repeat(64)}`,
          started: true,
          state: { running: { startedAt: '2026-11-20T10:00:05Z' } },
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

const POD_LIST = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '123456', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ' },
  items: Array.from({ length: 200 }, (_, i) => pod(i)),
};
const BODY = JSON.stringify(POD_LIST);

let backend: http.Server;
let server: Connected;
let seen = 0;

beforeAll(async () => {
  backend = http.createServer((req, res) => {
    seen++;
    // a little latency, as a real API server has: the 100 calls below overlap
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(BODY);
    }, 20);
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const manifest = `name: k8s-results\nopenapi: ${JSON.stringify(corpusSpec('kubernetes.json'))}\noutput: ./server\ninclude:\n  - operationId: [listCoreV1NamespacedPod]\n`;
  const built = await buildServer('results-kubernetes', 'openapi: 3.0.3\n', manifest);
  // the default response limit is 1,000,000 bytes; the budget of responses in flight 16 MiB here
  server = await connect(built.server, {
    K8S_RESULTS_BASE_URL: `http://127.0.0.1:${(backend.address() as AddressInfo).port}`,
    K8S_RESULTS_MAX_IN_FLIGHT_BYTES: String(16 * 1024 * 1024),
    K8S_RESULTS_BEARERTOKEN_API_KEY: 'Bearer k8s-test-token',
  });
}, 240_000);

afterAll(async () => {
  await server?.close();
  backend?.close();
});

const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** Peak resident memory of a process, in bytes (VmHWM). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

describe('a large Kubernetes list', () => {
  it('fits the budget: pods shown whole with name and namespace, the count, and how to page', async () => {
    expect(BODY.length).toBeGreaterThan(400_000);
    expect(countTokens(BODY)).toBeGreaterThan(100_000);
    const { tools } = await server.client.listTools();
    const name = tools[0]!.name;
    const result = (await server.client.callTool({ name, arguments: { namespace: 'shop' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(countTokens(text)).toBeLessThanOrEqual(8000);
    // structuredContent exactly when the tool lists an output schema (MCP: a tool with one must send it)
    expect(result.structuredContent !== undefined).toBe(tools[0]!.outputSchema !== undefined);
    if (result.structuredContent !== undefined) expect(countTokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(8000);
    const [json, note] = text.split('\n[results: ');
    const list = JSON.parse(json!) as { kind: string; metadata: { continue: string }; items: Array<{ metadata: { name: string; namespace: string } }> };
    expect(list.kind).toBe('PodList');
    expect(list.items.length).toBeGreaterThan(0);
    list.items.forEach((p, i) => expect(p.metadata).toMatchObject({ name: POD_LIST.items[i]!.metadata.name, namespace: 'shop' }));
    expect(note).toMatch(
      new RegExp(
        `^${list.items.length} of 200 items of "items" shown, cut to fit 8000 tokens; for the rest, call ${name} with \\{"namespace":"shop","limit":${list.items.length}\\} and page on`,
      ),
    );
  }, 60_000);

  it('100 such calls at once all end, pings are answered within 1 s, and memory stays bounded', async () => {
    const { tools } = await server.client.listTools();
    const name = tools[0]!.name;
    let worstPing = 0;
    let done = false;
    const pinger = (async () => {
      while (!done) {
        worstPing = Math.max(worstPing, await pingMs(server.client));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const results = await Promise.all(
      Array.from(
        { length: 100 },
        () => server.client.callTool({ name, arguments: { namespace: 'shop' } }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>,
      ),
    );
    done = true;
    await pinger;
    let shown = 0;
    for (const r of results) {
      if (r.isError) expect(textOf(r)).toMatch(/memory limit for responses in flight|retry when fewer calls are running/i);
      else {
        shown++;
        expect(countTokens(textOf(r))).toBeLessThanOrEqual(8000);
      }
    }
    expect(shown).toBeGreaterThan(0);
    expect(worstPing).toBeLessThan(1000);
    // 2 x the in-flight budget and the idle server's ~85 MB, with room for the collector's lag
    expect(peakRss(server.pid)).toBeLessThan(2 * 16 * 1024 * 1024 + 250 * 1024 * 1024);
  }, 180_000);
});
