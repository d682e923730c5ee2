/**
 * A synthetic OpenAPI 3.0 document of any size, for the scale tests: `count` operations over
 * resources of four methods each, with varied path, query and header parameters, small inline
 * and shared (`$ref`) object schemas for bodies and responses, enums, arrays and nested
 * objects. Deterministic: the same `count` gives the same document.
 */

const METHODS = ['get', 'post', 'put', 'delete'] as const;
const SHARED = 24;

/** Builds the document. */
export function syntheticSpec(count: number): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (let s = 0; s < SHARED; s++) {
    const props: Record<string, unknown> = {
      id: { type: 'integer', format: 'int64' },
      name: { type: 'string', maxLength: 100 },
      [`field${s}`]:
        s % 3 === 0 ? { type: 'array', items: { type: 'string' } } : s % 3 === 1 ? { type: 'number' } : { type: 'string', enum: ['a', 'b', `c${s}`] },
    };
    // a few shared schemas refer to others, so that $refs nest
    if (s > 0 && s % 4 === 0) props.parent = { $ref: `#/components/schemas/Shared${s - 1}` };
    schemas[`Shared${s}`] = { type: 'object', description: `Shared schema ${s}.`, properties: props, required: ['id'] };
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < count; i++) {
    const resource = Math.floor(i / METHODS.length);
    const method = METHODS[i % METHODS.length]!;
    const depth = resource % 3;
    const segments = [`/r${resource}`, ...Array.from({ length: depth }, (_, d) => `/{p${d}}/sub${d}`)];
    const path = segments.join('');
    const parameters: unknown[] = Array.from({ length: depth }, (_, d) => ({
      name: `p${d}`,
      in: 'path',
      required: true,
      schema: d % 2 ? { type: 'integer' } : { type: 'string' },
    }));
    if (method === 'get') {
      parameters.push({ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } });
      if (i % 3 === 0) parameters.push({ name: 'state', in: 'query', schema: { type: 'string', enum: ['open', 'closed', `s${i % 7}`] } });
      if (i % 5 === 0) parameters.push({ name: 'tags', in: 'query', style: 'form', explode: false, schema: { type: 'array', items: { type: 'string' } } });
    }
    if (i % 7 === 0) parameters.push({ name: `X-Trace-${i % 4}`, in: 'header', schema: { type: 'string' } });
    const shared = (n: number) => ({ $ref: `#/components/schemas/Shared${n % SHARED}` });
    const inline = (n: number) => ({
      type: 'object',
      properties: {
        [`a${n % 11}`]: { type: 'string' },
        [`b${n % 13}`]: { type: 'integer' },
        nested: { type: 'object', properties: { flag: { type: 'boolean' }, [`c${n % 5}`]: { type: 'array', items: { type: 'number' } } } },
      },
      required: [`a${n % 11}`],
    });
    const op: Record<string, unknown> = {
      operationId: `op${i}_${method}_r${resource}`,
      tags: [`group${resource % 40}`],
      parameters,
      responses: {
        [method === 'post' ? '201' : method === 'delete' ? '204' : '200']:
          method === 'delete'
            ? { description: 'Deleted' }
            : {
                description: 'OK',
                content: { 'application/json': { schema: i % 2 ? shared(i) : i % 10 === 0 ? { type: 'array', items: shared(i + 1) } : inline(i) } },
              },
      },
    };
    if (i % 9 !== 0) op.summary = `Operation ${i} on resource ${resource}`;
    if (method === 'post' || method === 'put')
      op.requestBody = { required: true, content: { 'application/json': { schema: i % 3 === 0 ? shared(i + 2) : inline(i + 3) } } };
    (paths[path] ??= {})[method] = op;
  }
  return { openapi: '3.0.3', info: { title: 'Synthetic', version: '1.0.0' }, servers: [{ url: 'https://api.example.com' }], paths, components: { schemas } };
}
