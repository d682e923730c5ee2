/**
 * Results that fit on the corpus' Stripe description (which has no response examples, so its
 * tools use the default bytes-per-token figure): `GetCustomers`, `GetCharges` and `GetInvoices`
 * against a local backend answering Stripe-shaped list pages of 100 objects with `has_more`, over
 * stdio with default result settings. Each result is under the 8,000-token budget (o200k, counted),
 * every object shown keeps its id, and the next call is Stripe's own: `starting_after` the last
 * object shown, which the backend then serves from exactly there.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import { buildServer, type Connected, connect } from '../helpers/generated-server.js';

/** A Stripe object of `kind` number `i`, with the nesting, nulls and metadata real ones carry. */
function object(kind: string, i: number): Record<string, unknown> {
  const id = `${kind === 'customer' ? 'cus' : kind === 'charge' ? 'ch' : 'in'}_${String(i).padStart(14, '0')}`;
  const common = { id, object: kind, created: 1_764_000_000 + i, livemode: false, metadata: { order_id: `ord_${i}`, region: 'eu-west' } };
  if (kind === 'customer')
    return {
      ...common,
      email: `buyer${i}@example.com`,
      name: `Buyer ${i}`,
      address: { city: 'Lisbon', country: 'PT', line1: `Rua ${i}`, line2: null, postal_code: '1000-001', state: null },
      balance: 0,
      currency: 'eur',
      default_source: null,
      delinquent: false,
      description: null,
      discount: null,
      invoice_prefix: `ABC${i}`,
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      phone: null,
      preferred_locales: [],
      shipping: null,
      tax_exempt: 'none',
      test_clock: null,
    };
  if (kind === 'charge')
    return {
      ...common,
      amount: 1999 + i,
      amount_captured: 1999 + i,
      amount_refunded: 0,
      currency: 'eur',
      customer: `cus_${i}`,
      description: `Order ${i}`,
      paid: true,
      status: 'succeeded',
      captured: true,
      refunded: false,
      payment_method: `pm_${i}`,
      payment_method_details: {
        card: {
          brand: 'visa',
          country: 'PT',
          exp_month: 12,
          exp_year: 2030,
          last4: '4242',
          funding: 'credit',
          network: 'visa',
          three_d_secure: null,
          wallet: null,
          checks: { address_line1_check: null, address_postal_code_check: 'pass', cvc_check: 'pass' },
        },
        type: 'card',
      },
      billing_details: {
        address: { city: null, country: 'PT', line1: null, line2: null, postal_code: '1000-001', state: null },
        email: null,
        name: `Buyer ${i}`,
        phone: null,
      },
      outcome: {
        network_status: 'approved_by_network',
        reason: null,
        risk_level: 'normal',
        risk_score: 12,
        seller_message: 'Payment complete.',
        type: 'authorized',
      },
      receipt_url: `https://pay.stripe.com/receipts/${id}`,
      refunds: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/charges/${id}/refunds` },
    };
  return {
    ...common,
    customer: `cus_${i}`,
    amount_due: 4999,
    amount_paid: 4999,
    amount_remaining: 0,
    currency: 'eur',
    status: 'paid',
    number: `INV-${i}`,
    hosted_invoice_url: `https://invoice.stripe.com/i/${id}`,
    invoice_pdf: `https://pay.stripe.com/invoice/${id}/pdf`,
    lines: {
      object: 'list',
      data: [
        {
          id: `il_${i}`,
          object: 'line_item',
          amount: 4999,
          currency: 'eur',
          description: '1 × Pro plan (at €49.99 / month)',
          period: { start: 1_764_000_000, end: 1_766_600_000 },
          quantity: 1,
          type: 'subscription',
        },
      ],
      has_more: false,
      total_count: 1,
      url: `/v1/invoices/${id}/lines`,
    },
    status_transitions: { finalized_at: 1_764_000_100, marked_uncollectible_at: null, paid_at: 1_764_000_200, voided_at: null },
    total: 4999,
    subtotal: 4999,
    tax: null,
  };
}

const KINDS: Record<string, string> = { '/v1/customers': 'customer', '/v1/charges': 'charge', '/v1/invoices': 'invoice' };
const TOTAL = 1000;

let backend: http.Server;
let server: Connected;
const requests: string[] = [];
const authorizations: Array<string | undefined> = [];

beforeAll(async () => {
  // a page of `limit` (default 100) objects after `starting_after`, out of 1,000
  backend = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend');
    requests.push(`${url.pathname}${url.search}`);
    authorizations.push(req.headers.authorization);
    const kind = KINDS[url.pathname];
    if (!kind) return void res.writeHead(404).end();
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const after = url.searchParams.get('starting_after');
    const start = after === null ? 0 : Number(after.split('_').pop()) + 1;
    const data = Array.from({ length: Math.min(limit, TOTAL - start) }, (_, k) => object(kind, start + k));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, has_more: start + data.length < TOTAL, url: url.pathname }));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const manifest = `name: stripe-results\nopenapi: ${JSON.stringify(corpusSpec('stripe.json'))}\noutput: ./server\ninclude:\n  - operationId: [GetCustomers, GetCharges, GetInvoices]\n`;
  const built = await buildServer('results-stripe', 'openapi: 3.0.3\n', manifest);
  server = await connect(built.server, {
    STRIPE_RESULTS_BASE_URL: `http://127.0.0.1:${(backend.address() as AddressInfo).port}`,
    STRIPE_RESULTS_BEARERAUTH_TOKEN: 'sk_test_results',
    STRIPE_RESULTS_BASICAUTH_USERNAME: 'sk_test_results',
    STRIPE_RESULTS_BASICAUTH_PASSWORD: '',
  });
}, 240_000);

afterAll(async () => {
  await server?.close();
  backend?.close();
});

const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe.each(['GetCustomers', 'GetCharges', 'GetInvoices'])('Stripe %s', (operationId) => {
  it('a 100-object page fits the budget, every object shown keeps its id, and starting_after continues exactly after the last', async () => {
    const { tools } = await server.client.listTools();
    const name = tools.find((t) => t.name === operationId)!.name;
    const result = (await server.client.callTool({ name, arguments: {} })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    // Stripe's first alternative, basicAuth, with the key as user name and an empty password (bearerAuth is set too)
    expect(authorizations.at(-1)).toBe(`Basic ${Buffer.from('sk_test_results:').toString('base64')}`);
    const text = textOf(result);
    expect(countTokens(text)).toBeLessThanOrEqual(8000);
    // structuredContent exactly when the tool lists an output schema (MCP: a tool with one must send it)
    expect(result.structuredContent !== undefined).toBe(tools.find((t) => t.name === operationId)!.outputSchema !== undefined);
    if (result.structuredContent !== undefined) expect(countTokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(8000);
    const [json, note] = text.split('\n[results: ');
    const page = JSON.parse(json!) as { object: string; has_more: boolean; data: Array<{ id: string }> };
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.length).toBeLessThan(100);
    page.data.forEach((o, i) => expect(o.id).toMatch(new RegExp(`_${String(i).padStart(14, '0')}$`)));
    const last = page.data.at(-1)!.id;
    expect(note).toMatch(
      new RegExp(`^${page.data.length} of 100 items of "data" shown, cut to fit 8000 tokens; the rest: call ${name} with \\{"starting_after":"${last}"\\}`),
    );
    // the next call, as given, starts right after the last object shown
    const next = (await server.client.callTool({ name, arguments: { starting_after: last } })) as CallToolResult;
    const second = JSON.parse(textOf(next).split('\n[results: ')[0]!) as { data: Array<{ id: string }> };
    expect(second.data[0]!.id).toMatch(new RegExp(`_${String(page.data.length).padStart(14, '0')}$`));
    expect(requests.at(-1)).toContain(`starting_after=${last}`);
  }, 60_000);
});
