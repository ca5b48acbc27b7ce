/**
 * bad-inputs: a corpus of malformed, oversize, unauthorized, misdirected and out-of-range requests sent to a master
 * and a slave of a real cluster. Every one must be answered with a 4xx and a clear message (a JSON error with a
 * message), never a 5xx, and the nodes must stay healthy (GET /health 200, a normal chat answered). A push forged in
 * the master's name is a nudge the slave checks with its master: it is answered 2xx marked `stale`/`ignored`, and
 * the slave's links and guardian settings must be what they were before (`changed_nothing`).
 */
import { call, markedChat, postChat } from './faults-client';
import { alive, FaultScope, rssMb } from './faults-cluster';
import { classify, errorOf, type FaultRow, faultRow, type Outcome } from './faults-count';
import { simModel } from './faults-lending';
import { getJson } from './http-client';
import { TRIO_CLUSTER_TOKEN, Trio } from './lending-trio';
import { BENCH_CONSOLE_TOKEN } from './scope';
import type { BenchOptions } from './types';

export const BODY_LIMIT = 64 * 1024;
export const UPLOAD_LIMIT = 32 * 1024;

export interface BadInput {
  name: string;
  /** Which node it goes to. */
  node: 'master' | 'slave';
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The request line's target, when it is another form of `path` (absolute-form, encoded, dot-segment). */
  target?: string;
  /** A push forged in the master's name: answered 2xx marked `stale: true` or `ignored: true`, not a 4xx. */
  ignored?: true;
}

export interface InputResult {
  name: string;
  status: number | null;
  code: string | null;
  /** A 4xx with a JSON error carrying a message (a forged push: a 2xx that says it was ignored). */
  clear: boolean;
}

const cluster = { authorization: `Bearer ${TRIO_CLUSTER_TOKEN}` };
const consoleAuth = { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` };
const json = (v: unknown) => JSON.stringify(v);
const chat = (over: Record<string, unknown>) =>
  json({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }], ...over });
const zeros = '0'.repeat(64);
/** The bench master's node ID with a start time far in the future: the epoch a forger would claim. */
const FORGED_EPOCH = 'master:9999999999999';

function multipart(
  fields: Record<string, string>,
  file?: { name: string; bytes: number },
): { body: Buffer; headers: Record<string, string> } {
  const b = 'faultsuiteboundary';
  const parts: Buffer[] = Object.entries(fields).map(([k, v]) =>
    Buffer.from(`--${b}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`),
  );
  if (file)
    parts.push(
      Buffer.from(
        `--${b}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: audio/wav\r\n\r\n`,
      ),
      Buffer.alloc(file.bytes, 1),
      Buffer.from('\r\n'),
    );
  parts.push(Buffer.from(`--${b}--\r\n`));
  const body = Buffer.concat(parts);
  return {
    body,
    headers: { 'content-type': `multipart/form-data; boundary=${b}`, 'content-length': String(body.length) },
  };
}

const lease = (over: Record<string, unknown>) =>
  json({
    owner: { nodeId: 'owner', model: 'a' },
    lease: {
      linkId: 'x',
      owner: { nodeId: 'owner', model: 'a' },
      helper: { nodeId: 'helper', model: 'b' },
      slots: 1,
      ttlMs: 1000,
      probe: false,
      ownerJobMs: 100,
      helperJobMs: 60,
      helperSwitchMs: 0,
      measured: true,
      ...over,
    },
  });

/** Other forms of a request target's `path` that a guard must see through: each reaches the route or no route. */
function targetForms(path: string, authority: string): [string, string][] {
  const slash = path.lastIndexOf('/');
  return [
    ['absolute', `http://${authority}${path}`],
    [
      'percent-encoded',
      `${path.slice(0, slash + 1)}%${path.charCodeAt(slash + 1).toString(16)}${path.slice(slash + 2)}`,
    ],
    ['double-slash', `/${path}`],
    ['dot-segment', `/x/..${path}`],
    ['upper-case', path.toUpperCase()],
  ];
}

/**
 * The corpus; `snapshot` is a real slave snapshot (for registrations), `slaveUrl` a URL the master lists, `authority`
 * the `host:port` of each node (for absolute-form request targets).
 */
export function corpus(
  snapshot: Record<string, unknown>,
  slaveUrl: string,
  authority: Record<BadInput['node'], string>,
): BadInput[] {
  const inputs: BadInput[] = [];
  const add = (name: string, node: BadInput['node'], path: string, o: Omit<BadInput, 'name' | 'node' | 'path'> = {}) =>
    inputs.push({ name, node, path, ...o });
  const post = (body: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const C = '/v1/chat/completions';
  // malformed and truncated JSON
  add('json-malformed', 'master', C, post('{"model": "model-a", messages: [}'));
  add('json-truncated', 'master', C, post('{"model":"model-a","messages":[{"role":"user","content":"hi"'));
  add('json-empty-body', 'master', C, post(''));
  add('json-trailing-garbage', 'master', C, post('{"model":"model-a","messages":[{"role":"user"}]} xyz'));
  add('json-top-level-array', 'master', C, post('[1,2,3]'));
  add('json-top-level-string', 'master', C, post('"hello"'));
  add('json-null', 'master', C, post('null'));
  add(
    'json-deeply-nested',
    'master',
    C,
    post(`{"model":"model-a","messages":${'['.repeat(20_000)}${']'.repeat(20_000)}}`),
  );
  add('content-type-text', 'master', C, post(chat({}), { 'content-type': 'text/plain' }));
  add('node-api-json-malformed', 'slave', '/router/v1/node/offload/lease', post('{"owner": ', cluster));
  // wrong types
  add('chat-model-number', 'master', C, post(json({ model: 5, messages: [{ role: 'user', content: 'hi' }] })));
  add('chat-model-missing', 'master', C, post(json({ messages: [{ role: 'user', content: 'hi' }] })));
  add('chat-messages-string', 'master', C, post(chat({ messages: 'hi' })));
  add('chat-messages-empty', 'master', C, post(chat({ messages: [] })));
  add('chat-message-role-number', 'master', C, post(chat({ messages: [{ role: 5, content: 'hi' }] })));
  add('chat-stream-string', 'master', C, post(chat({ stream: 'yes' })));
  add('chat-unknown-model', 'master', C, post(chat({ model: 'no-such-model' })));
  add('completion-prompt-number', 'master', '/v1/completions', post(json({ model: 'model-a', prompt: 42 })));
  add('embeddings-input-object', 'master', '/v1/embeddings', post(json({ model: 'model-a', input: { a: 1 } })));
  add(
    'images-size-word',
    'master',
    '/v1/images/generations',
    post(json({ model: 'model-a', prompt: 'a cat', size: 'big' })),
  );
  add('images-n-huge', 'master', '/v1/images/generations', post(json({ model: 'model-a', prompt: 'a cat', n: 1000 })));
  add('ollama-chat-messages-string', 'master', '/api/chat', post(json({ model: 'model-a', messages: 'x' })));
  add('ollama-generate-prompt-number', 'master', '/api/generate', post(json({ model: 'model-a', prompt: 5 })));
  add('relay-missing-fields', 'master', '/router/v1/node/offload/relay', post(json({ requestId: 7 }), cluster));
  add(
    'withdraw-ids-not-array',
    'slave',
    '/router/v1/node/offload/withdraw',
    post(json({ requestIds: 'all' }), cluster),
  );
  add(
    'event-bad-trigger',
    'master',
    '/router/v1/node/offload/event',
    post(json({ owner: { nodeId: 'owner', model: 'a' }, trigger: 'panic' }), cluster),
  );
  // oversize bodies and uploads
  add('body-over-limit', 'master', C, post(chat({ padding: 'x'.repeat(BODY_LIMIT + 1024) })));
  const big = multipart({ model: 'model-a' }, { name: 'a.wav', bytes: UPLOAD_LIMIT + 4096 });
  add('upload-over-limit', 'master', '/v1/audio/transcriptions', {
    method: 'POST',
    body: big.body,
    headers: big.headers,
  });
  const noFile = multipart({ model: 'model-a' });
  add('upload-without-file', 'master', '/v1/audio/transcriptions', {
    method: 'POST',
    body: noFile.body,
    headers: noFile.headers,
  });
  add('upload-not-multipart', 'master', '/v1/audio/transcriptions', post(json({ model: 'model-a', file: 'abc' })));
  // bad and missing tokens
  add('node-api-no-token', 'master', '/router/v1/node/snapshot');
  add('node-api-wrong-token', 'master', '/router/v1/node/snapshot', {
    headers: { authorization: 'Bearer not-the-cluster-token' },
  });
  add('node-api-console-token', 'slave', '/router/v1/node/held', { headers: consoleAuth });
  add('node-api-basic-scheme', 'master', '/router/v1/node/snapshot', {
    headers: { authorization: `Basic ${Buffer.from(`x:${TRIO_CLUSTER_TOKEN}`).toString('base64')}` },
  });
  add('node-api-no-token-bad-body', 'master', '/router/v1/node/register', post('{"this is": not json'));
  add(
    'worker-api-no-token',
    'slave',
    `/router/v1/node/worker${C}`,
    post(json({ model: 'a', messages: [{ role: 'user', content: 'hi' }] })),
  );
  add('console-no-token', 'master', '/router/v1/console/models');
  add('console-wrong-token', 'master', '/router/v1/console/models', {
    headers: { authorization: 'Bearer nope-nope-nope' },
  });
  add('console-cluster-token', 'master', '/router/v1/console/lanes', { headers: cluster });
  add('site-no-token', 'master', '/router/v1/site/text-routing-groups');
  // registrations: an unlisted slave, a node claiming the master's id, a registration at a slave
  add(
    'register-unlisted-slave',
    'master',
    '/router/v1/node/register',
    post(json({ ...snapshot, nodeId: 'intruder', publicUrl: 'http://127.0.0.1:1/' }), cluster),
  );
  add(
    'register-without-public-url',
    'master',
    '/router/v1/node/register',
    post(json({ ...snapshot, nodeId: 'intruder', publicUrl: null }), cluster),
  );
  add('register-not-a-snapshot', 'master', '/router/v1/node/register', post(json({ hello: 1 }), cluster));
  add(
    'register-as-the-master',
    'master',
    '/router/v1/node/register',
    post(json({ ...snapshot, nodeId: 'master', publicUrl: slaveUrl }), cluster),
  );
  add('register-at-a-slave', 'slave', '/router/v1/node/register', post(json(snapshot), cluster));
  // path traversal in asset paths
  const inv = (q: string, node: BadInput['node'] = 'master', api = 'node') =>
    [node, `/router/v1/${api}/assets/inventory?${q}`, { headers: api === 'node' ? cluster : consoleAuth }] as const;
  add('inventory-dotdot', ...inv('root=shared&path=../../etc'));
  add('inventory-absolute', ...inv('root=shared&path=/etc'));
  add('inventory-encoded-dotdot', ...inv('root=shared&path=%2e%2e%2f%2e%2e%2fetc'));
  add('inventory-backslash-dotdot', ...inv('root=shared&path=..%5C..%5Cetc'));
  add('inventory-nul-byte', ...inv('root=shared&path=a%00b'));
  add('inventory-protected-models-root', ...inv('root=models&path=a'));
  add('inventory-unknown-root', ...inv('root=etc&path=passwd'));
  add('inventory-path-without-root', ...inv('path=a'));
  add('console-inventory-dotdot', ...inv('root=shared&path=../..', 'slave', 'console'));
  add('by-hash-traversal', 'slave', '/router/v1/node/assets/by-hash/..%2F..%2Fetc%2Fpasswd', { headers: cluster });
  add('by-hash-unknown', 'slave', `/router/v1/node/assets/by-hash/${zeros}`, { headers: cluster });
  add(
    'asset-fetch-protected-root',
    'slave',
    '/router/v1/console/assets/fetch',
    post(json({ url: 'http://127.0.0.1:1/', sha256: zeros, root: 'models' }), consoleAuth),
  );
  add(
    'asset-fetch-unknown-root',
    'slave',
    '/router/v1/console/assets/fetch',
    post(json({ url: 'http://127.0.0.1:1/', sha256: zeros, root: '../../tmp' }), consoleAuth),
  );
  add(
    'asset-fetch-bad-hash',
    'slave',
    '/router/v1/console/assets/fetch',
    post(json({ nodeId: 'owner', sha256: '../../etc/passwd' }), consoleAuth),
  );
  // repeated query keys
  add('query-repeated-limit', 'master', '/router/v1/console/decisions?limit=1&limit=2', { headers: consoleAuth });
  add('query-repeated-node', 'master', '/router/v1/console/runtime.health?node=owner&node=helper', {
    headers: consoleAuth,
  });
  add('query-repeated-root', ...inv('root=shared&root=models'));
  // bad multi specs and strategies (runtime.setRouting)
  const route = (name: string, body: unknown) =>
    add(name, 'master', '/router/v1/console/runtime.setRouting', post(json(body), consoleAuth));
  route('multi-empty', { strategy: 'multi:' });
  route('multi-no-weight', { strategy: 'multi:least-request' });
  route('multi-zero-weight', { strategy: 'multi:least-request:0' });
  route('multi-negative-weight', { strategy: 'multi:least-request:-2' });
  route('multi-nan-weight', { strategy: 'multi:least-request:abc' });
  route('multi-infinite-weight', { strategy: 'multi:least-request:Infinity' });
  route('multi-unknown-scorer', { strategy: 'multi:bogus:1' });
  route('multi-empty-entry', { strategy: 'multi:least-request:3,,least-kv-cache:1' });
  route('multi-not-weightable', { strategy: 'multi:round-robin:1' });
  route('strategy-unknown', { strategy: 'fastest-please' });
  route('strategy-wrong-type', { strategy: 5 });
  route('strategy-extra-field', { strategy: 'round-robin', extra: 1 });
  // bad durations and numbers: a pushed lease, decision-log times and limits, a link push
  const L = '/router/v1/node/offload/lease';
  add('lease-ttl-negative', 'slave', L, post(lease({ ttlMs: -1 }), cluster));
  add('lease-ttl-zero', 'slave', L, post(lease({ ttlMs: 0 }), cluster));
  add('lease-ttl-huge', 'slave', L, post(lease({ ttlMs: 1e15 }), cluster));
  add('lease-ttl-string', 'slave', L, post(lease({ ttlMs: '5s' }), cluster));
  add('lease-job-ms-string', 'slave', L, post(lease({ ownerJobMs: '100ms' }), cluster));
  add('lease-slots-3', 'slave', L, post(lease({ slots: 3 }), cluster));
  add('lease-at-the-master', 'master', L, post(lease({}), cluster));
  add('decisions-from-not-a-time', 'master', '/router/v1/console/decisions?from=yesterday', { headers: consoleAuth });
  add('decisions-limit-negative', 'master', '/router/v1/console/decisions?limit=-5', { headers: consoleAuth });
  add('decisions-limit-huge', 'master', '/router/v1/console/decisions?limit=1e309', { headers: consoleAuth });
  add('decisions-limit-word', 'master', '/router/v1/console/decisions?limit=many', { headers: consoleAuth });
  add('decisions-bad-cursor', 'master', '/router/v1/console/decisions?cursor=%25%25garbage', { headers: consoleAuth });
  add('links-push-to-master', 'master', '/router/v1/node/links', post(json({ version: 1, links: [] }), cluster));
  add('links-push-negative-version', 'slave', '/router/v1/node/links', post(json({ version: -1, links: [] }), cluster));
  // Host and Origin
  add('host-foreign', 'master', '/v1/models', { headers: { host: 'evil.example.com' } });
  add('host-foreign-with-port', 'master', '/v1/models', { headers: { host: 'evil.example.com:8080' } });
  add('host-foreign-console', 'master', '/router/v1/console/models', {
    headers: { host: 'rebind.attacker.test', ...consoleAuth },
  });
  add('origin-foreign', 'master', C, post(chat({}), { origin: 'http://evil.example.com' }));
  add('origin-null', 'master', C, post(chat({}), { origin: 'null' }));
  add('origin-foreign-console', 'master', '/router/v1/console/models', {
    headers: { origin: 'https://evil.example.com', ...consoleAuth },
  });
  // request-target forms: every guard decides on the route the router matched, whatever the request line says
  const guarded: [string, BadInput['node'], string, Omit<BadInput, 'name' | 'node' | 'path'>][] = [
    ['console-no-token', 'master', '/router/v1/console/models', {}],
    ['site-no-token', 'master', '/router/v1/site/text-routing-groups', {}],
    ['node-api-no-token', 'slave', '/router/v1/node/snapshot', {}],
    [
      'recipe-at-a-slave',
      'slave',
      '/router/v1/site/recipes/r',
      { method: 'PUT', body: json({ name: 'r' }), headers: { 'content-type': 'application/json', ...consoleAuth } },
    ],
  ];
  for (const [name, node, path, o] of guarded) {
    for (const [form, target] of targetForms(path, authority[node]))
      add(`${name}-${form}-target`, node, path, { ...o, target });
  }
  // Pushes forged with the cluster token (LEASE-1, GUARD-1): a foreign epoch is refused; the master's node ID with a
  // far-future start time, a guardian at the forger's URL, or a lease the master does not hold is checked with the
  // master and ignored.
  const forgedGuardians = (epoch: string) =>
    json({
      version: 1_000_000,
      epoch,
      settings: [
        {
          scope: 'cluster',
          node_id: null,
          model: null,
          guardian: { node_id: 'helper', model: 'b' },
          guardian_url: 'http://127.0.0.1:1',
          guardian_public_id: 'model-b',
        },
      ],
    });
  const forgedLinks = (epoch: string) =>
    json({
      version: 1_000_000,
      epoch,
      links: [
        {
          id: 'forged',
          lane: 'text',
          owner: { nodeId: 'owner', model: 'a' },
          helper: { nodeId: 'helper', model: 'b' },
          loadIfUnloaded: true,
          restoreAfterBorrow: false,
        },
      ],
    });
  add(
    'guardians-push-foreign-epoch',
    'slave',
    '/router/v1/node/guardians',
    post(forgedGuardians('intruder:1'), cluster),
  );
  add('links-push-foreign-epoch', 'slave', '/router/v1/node/links', post(forgedLinks('intruder:1'), cluster));
  add('guardians-push-forged-master-epoch', 'slave', '/router/v1/node/guardians', {
    ...post(forgedGuardians(FORGED_EPOCH), cluster),
    ignored: true,
  });
  add('links-push-forged-master-epoch', 'slave', '/router/v1/node/links', {
    ...post(forgedLinks(FORGED_EPOCH), cluster),
    ignored: true,
  });
  add('lease-push-not-held', 'slave', L, { ...post(lease({}), cluster), ignored: true });
  add('host-foreign-in-absolute-target', 'master', '/v1/models', { target: 'http://evil.example.com/v1/models' });
  add('host-foreign-in-absolute-console-target', 'master', '/router/v1/console/models', {
    target: 'http://rebind.attacker.test:80/router/v1/console/models',
    headers: consoleAuth,
  });
  return inputs;
}

/** A 4xx whose body is a JSON error with a message; for a forged push (`ignored`), a 2xx that says it was ignored. */
export function judge(name: string, status: number | null, body: string, ignored = false): InputResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (ignored) {
    const said =
      parsed &&
      typeof parsed === 'object' &&
      ((parsed as { stale?: unknown }).stale === true || (parsed as { ignored?: unknown }).ignored === true);
    return {
      name,
      status,
      code: said ? 'ignored' : null,
      clear: status !== null && status >= 200 && status < 300 && !!said,
    };
  }
  const e = status === null ? null : errorOf(parsed, status);
  return { name, status, code: e?.code ?? null, clear: status !== null && status >= 400 && status < 500 && e !== null };
}

/**
 * What a forged links or guardians push could change on a slave: the versions it runs and its guardian settings. A
 * forged lease push is judged by its answer (`ignored`: the slave applied the lease its master holds instead).
 */
async function pushedState(url: string): Promise<string> {
  const snap = await getJson<{ linksVersion?: number; guardiansVersion?: number }>(
    `${url}/router/v1/node/snapshot`,
    cluster,
  );
  const guardians = await getJson<{ version: number; settings: unknown[] }>(
    `${url}/router/v1/site/guardians`,
    consoleAuth,
  );
  return JSON.stringify({
    links: snap.linksVersion ?? null,
    guardians: [snap.guardiansVersion ?? null, guardians.version, guardians.settings],
  });
}

export async function badInputs(o: BenchOptions): Promise<FaultRow> {
  const scope = new FaultScope(() => ({
    server: { body_limit: BODY_LIMIT, upload_limit: UPLOAD_LIMIT },
    models: { shared_dir: shared },
  }));
  const shared = scope.tempDir('routerdesk-bench-shared-');
  try {
    const t = await Trio.start(scope, { owner: { a: simModel('model-a', 2) }, helper: { b: simModel('model-b', 2) } });
    const nodes = { master: t.master, slave: t.owner };
    const before = rssMb([t.master, t.owner, t.helper]);
    const snapshot = await getJson<Record<string, unknown>>(`${t.owner.url}/router/v1/node/snapshot`, cluster);
    const inputs = corpus(snapshot, t.owner.url, {
      master: new URL(t.master.url).host,
      slave: new URL(t.owner.url).host,
    });
    o.log(`bad-inputs: ${inputs.length} bad inputs to the master and a slave`);
    const results: InputResult[] = [];
    const outcomes: Outcome[] = [];
    const pushedBefore = await pushedState(t.owner.url);
    for (const i of inputs) {
      const a = await call(`${nodes[i.node].url}${i.path}`, {
        method: i.method,
        headers: i.headers,
        body: i.body,
        target: i.target,
        timeoutMs: 15_000,
        agent: false,
      });
      results.push(judge(i.name, a.status, a.body, i.ignored));
      outcomes.push(classify(a));
    }
    const pushedAfter = await pushedState(t.owner.url);
    const changedNothing = pushedAfter === pushedBefore;
    if (!changedNothing)
      o.log(`bad-inputs: the forged pushes changed the slave: before ${pushedBefore}, after ${pushedAfter}`);
    const health = await Promise.all(
      [t.master, t.owner, t.helper].map(
        async (n) => (await call(`${n.url}/health`, { timeoutMs: 5_000 })).status === 200,
      ),
    );
    const chats = await Promise.all(
      [t.master, t.owner].map(
        async (n) => classify(await postChat(n.url, markedChat('model-a', 'after', 2), 10_000)).kind === 'ok',
      ),
    );
    const failures = results.filter((r) => !r.clear);
    for (const f of failures)
      o.log(`bad-inputs: ${f.name} answered ${f.status ?? 'nothing'} ${f.code ?? '(no clear error)'}`);
    return faultRow(
      'bad-inputs',
      outcomes,
      null,
      { before, after: rssMb([t.master, t.owner, t.helper].filter(alive)) },
      {
        note: `${inputs.length} bad inputs; every one must be a 4xx with a JSON error message, but a push forged in the master's name: a 2xx that says it was ignored, and changed_nothing on the slave`,
        changed_nothing: changedNothing,
        inputs: results.map(({ name, status, code }) => ({ name, status, code })),
        failures: failures.length + (changedNothing ? 0 : 1),
        failed_inputs: [
          ...failures.map((f) => `${f.name}: ${f.status ?? 'no answer'}`),
          ...(changedNothing ? [] : ['forged pushes: the slave changed']),
        ],
        five_xx: results.filter((r) => (r.status ?? 0) >= 500).length,
        healthy_after: health.every(Boolean) && chats.every(Boolean),
      },
    );
  } finally {
    await scope.close();
  }
}
