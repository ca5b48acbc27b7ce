import { request as httpRequest } from 'node:http';
import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import {
  buildOpenApiDocument,
  documentPath,
  ITEM_SCHEMA_KEY,
  type JsonSchema,
  MEDIA_TYPES,
  type OpenApiDocument,
} from '../../src-router/http/openapi/document';
import { EXAMPLES, type Example } from '../../src-router/http/openapi/examples';
import { OPERATIONS, type Operation } from '../../src-router/http/openapi/operations';
import { QUERIES, SCHEMAS } from '../../src-router/http/openapi/schemas';
import { CLUSTER_TOKEN, type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { TEST_CONSOLE_TOKEN, wavFile } from '../support/node-harness';

/**
 * The contract test: a real master and slave (sim engines) get every operation of the document the master serves at
 * /openapi.json, with its example request; each answer's status, content type and body (every event of a stream)
 * must be what the document says.
 */
const fast = { load_time: '100ms', token_time: '2ms', step_time: '2ms', audio_time_per_second: '10ms' };
const sim = (name: string, capabilities: string[]): ModelConfigInput =>
  ({ name, backend: 'sim', capabilities, contextsize: 4096, sim: { ...fast, tokens: 4 } }) as ModelConfigInput;
const CLIENT_KEY = 'contract-client-key-0123456789';

let cluster: LendingCluster;
let doc: OpenApiDocument;
let ajv: Ajv2020;
const ctx: Record<string, unknown> = {};

beforeAll(async () => {
  cluster = await startLendingCluster({
    masterModels: {
      chat: sim('sim-chat', ['text', 'embedding']),
      painter: sim('sim-image', ['image']),
      ears: sim('sim-whisper', ['transcription']),
    },
    slaves: {
      'gpu-a': {
        helper: sim('sim-helper', ['text']),
        brush: sim('sim-brush', ['image']),
        seer: sim('sim-seer', ['text', 'multimodal']),
      },
    },
    masterServer: { api_keys: [CLIENT_KEY] },
  });
  const res = await fetch(`${cluster.master.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as OpenApiDocument;
  ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema(doc as unknown as JsonSchema, 'openapi');

  // The values the examples name: local IDs (file names), a one-time code, the slave's snapshot and pushed settings.
  Object.assign(ctx, {
    chat: 'chat',
    painter: 'painter',
    ears: 'ears',
    helper: 'helper',
    brush: 'brush',
    seer: 'seer',
    slaveUrl: cluster.urls['gpu-a'],
    consoleToken: TEST_CONSOLE_TOKEN,
  });
  ctx.code = (
    (await call('POST', cluster.master.url, '/router/v1/console/codes', 'console')).body as { code: string }
  ).code;
  ctx.snapshot = (await call('GET', cluster.urls['gpu-a'], '/router/v1/node/snapshot', 'cluster')).body;
  const settings = (await call('GET', cluster.master.url, '/router/v1/node/master-settings?node=gpu-a', 'cluster'))
    .body as { links: unknown; guardians: unknown };
  ctx.linksPush = settings.links;
  ctx.guardiansPush = settings.guardians;
  ctx.config = (
    (await call('GET', cluster.master.url, '/router/v1/console/settings', 'console')).body as { config: unknown }
  ).config;
  const now = Date.now();
  Object.assign(ctx, { from: now - 60_000, to: now, fromText: String(now - 60_000), toText: String(now) });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

const TOKENS: Record<Operation['security'], string | null> = {
  none: null,
  clientKey: CLIENT_KEY,
  console: TEST_CONSOLE_TOKEN,
  operator: TEST_CONSOLE_TOKEN,
  cluster: CLUSTER_TOKEN,
};

async function call(
  method: string,
  base: string,
  path: string,
  security: Operation['security'],
  init: { body?: unknown; form?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {};
  const token = TOKENS[security];
  if (token) headers.authorization = `Bearer ${token}`;
  let body: FormData | string | undefined;
  if (init.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(init.form)) form.append(k, v);
    form.append('file', new Blob([new Uint8Array(wavFile(0.5))], { type: 'audio/wav' }), 'hello.wav');
    body = form;
  } else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  const text = method === 'HEAD' ? '' : await res.text();
  return {
    status: res.status,
    headers: res.headers,
    type,
    text,
    body: type === 'application/json' && text ? (JSON.parse(text) as unknown) : text,
  };
}

/** `{{name}}` → ctx.name (the whole value when the string is only that, else spliced in as text). */
function resolve<T>(value: T): T {
  if (typeof value === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(value);
    if (whole) return ctx[whole[1]] as T;
    return value.replace(/\{\{(\w+)\}\}/g, (_m, k: string) => String(ctx[k])) as T;
  }
  if (Array.isArray(value)) return value.map(resolve) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)])) as T;
  return value;
}

function urlOf(op: Operation, ex: Example): string {
  const params = resolve(ex.params ?? {});
  const path = documentPath(op).replace(/\{(\w+)\}/g, (_m, name: string) =>
    name === op.wildcard ? params[name] : encodeURIComponent(params[name]),
  );
  const query = new URLSearchParams(resolve(ex.query ?? {})).toString();
  return query ? `${path}?${query}` : path;
}

function expectValid(schema: JsonSchema, value: unknown, what: string) {
  const validate = ajv.compile(schema);
  if (!validate(value))
    throw new Error(`${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
}

const refSchema = (ref: string): JsonSchema => ({ $ref: `openapi${ref}` });

/** Checks an answer against the operation's documented answer for its status (or the error answer). */
function checkAnswer(op: Operation, answer: Awaited<ReturnType<typeof call>>, what: string, stream = false) {
  const documented = doc.paths[documentPath(op)][op.method.toLowerCase()] as {
    responses: Record<
      string,
      { content?: Record<string, JsonSchema>; headers?: Record<string, { required?: boolean }> }
    >;
  };
  const response = documented.responses[String(answer.status)] ?? documented.responses.default;
  for (const [name, header] of Object.entries(response.headers ?? {}))
    if (header.required) expect(answer.headers.get(name), `${what}: header ${name}`).toBeTruthy();
  const content = response.content ?? {};
  if (Object.keys(content).length === 0 || op.method === 'HEAD') return;
  const media = Object.entries(content).find(([type]) => type.split(';')[0].trim() === answer.type);
  expect(media, `${what}: content type ${answer.type} is not one of ${Object.keys(content).join(', ')}`).toBeDefined();
  const [type, mediaObject] = media!;
  if (type === MEDIA_TYPES.json) {
    expect(stream, `${what}: a stream was asked for`).toBe(false);
    expectValid(refSchema((mediaObject.schema as { $ref: string }).$ref), answer.body, what);
    return;
  }
  const item = mediaObject[ITEM_SCHEMA_KEY] as { $ref: string } | undefined;
  if (type === MEDIA_TYPES.sse || type === MEDIA_TYPES.ndjson) {
    const lines = answer.text.split('\n').filter((l) => l.trim() !== '');
    const events =
      type === MEDIA_TYPES.sse
        ? lines
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .filter((d) => d !== '[DONE]')
        : lines;
    if (stream) expect(events.length, `${what}: events`).toBeGreaterThan(0);
    for (const e of events) if (item) expectValid(refSchema(item.$ref), JSON.parse(e), `${what} event`);
  }
}

describe('every documented operation answers as documented (master and slave, sim engines)', () => {
  it('the document the node serves is the one generated here, with an example for every operation', async () => {
    const health = (await call('GET', cluster.master.url, '/health', 'none')).body as { version: string };
    expect(doc).toEqual(buildOpenApiDocument(health.version));
    expect(
      OPERATIONS.filter((op) => !EXAMPLES[`${op.method} ${op.path}`]).map((op) => `${op.method} ${op.path}`),
    ).toEqual([]);
  });

  for (const op of OPERATIONS) {
    const key = `${op.method} ${op.path}`;
    it(key, async () => {
      const ex = EXAMPLES[key];
      const body = resolve(ex.body);
      // The example is a valid request by the operation's own schemas.
      if (op.body && op.body.media !== 'multipart' && body !== undefined) {
        const parsed = SCHEMAS[op.body.schema].safeParse(body);
        expect(parsed.success, `${key}: example body: ${parsed.error?.message}`).toBe(true);
      }
      if (op.query) {
        const parsed = QUERIES[op.query].safeParse(resolve(ex.query ?? {}));
        expect(parsed.success, `${key}: example query: ${parsed.error?.message}`).toBe(true);
      }
      const base = ex.node === 'slave' ? cluster.urls['gpu-a'] : cluster.master.url;
      const expected =
        ex.status ??
        Math.min(
          ...Object.keys(op.answers)
            .map(Number)
            .filter((s) => s >= 200 && s < 300),
        );
      const answer = await call(op.method, base, urlOf(op, ex), op.security, {
        body,
        form: ex.form ? resolve(ex.form) : undefined,
      });
      expect(answer.status, `${key}: ${answer.text.slice(0, 500)}`).toBe(expected);
      checkAnswer(op, answer, key);
      for (const [name, field] of Object.entries(ex.capture ?? {}))
        ctx[name] = (answer.body as Record<string, unknown>)[field];

      if (ex.stream !== undefined) {
        const streamed = await call(op.method, base, urlOf(op, ex), op.security, { body: resolve(ex.stream) });
        expect(streamed.status, `${key} (stream): ${streamed.text.slice(0, 500)}`).toBe(expected);
        expect([MEDIA_TYPES.sse, MEDIA_TYPES.ndjson]).toContain(streamed.type);
        checkAnswer(op, streamed, `${key} (stream)`, true);
      }
    });
  }

  it('a client API key is needed where the document says so: /v1 without it is 401 with the documented error', async () => {
    const op = OPERATIONS.find((o) => o.method === 'GET' && o.path === '/v1/models')!;
    const answer = await call('GET', cluster.master.url, '/v1/models', 'none');
    expect(answer.status).toBe(401);
    checkAnswer(op, answer, 'GET /v1/models without a key');
  });
});

describe('/openapi.json and /docs', () => {
  it("need no token, but the Host and Origin checks apply: another site's page gets 403, another host's name 421", async () => {
    const page = await fetch(`${cluster.master.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('id="postV1ChatCompletions"');

    const crossSite = await fetch(`${cluster.master.url}/openapi.json`, { headers: { origin: 'http://evil.example' } });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');

    const { port } = new URL(cluster.master.url);
    for (const target of ['http://evil.example/openapi.json', 'http://evil.example/docs']) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: target }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status, target).toBe(421);
    }
  });
});
