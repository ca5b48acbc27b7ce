import { OPERATIONS } from './operations';

/**
 * A valid request for every documented operation, keyed `METHOD path` as in `OPERATIONS`. The contract test sends
 * each one to a real master and slave and checks the answer against the document; it parses each example with the
 * operation's own schema first. `{{name}}` stands for a value of the test's cluster (a model's local ID, a link the
 * test made, a one-time code); a string that is only `{{name}}` becomes that value whatever its type.
 */
export interface Example {
  /** Which node of the test cluster takes it (default: the master). */
  node?: 'master' | 'slave';
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** Multipart fields; the test adds `file` (a short WAV). */
  form?: Record<string, string>;
  /** The status this request gets there (default: the operation's first 2xx). */
  status?: number;
  /** The body again, asking for the streamed answer. */
  stream?: unknown;
  /** Values of the answer body kept for later examples: context name → field. */
  capture?: Record<string, string>;
}

const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 };
const completion = { model: 'sim-chat', prompt: 'hi', max_tokens: 3 };
const responses = { model: 'sim-chat', input: 'hi', max_output_tokens: 3 };
const ollamaChat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 3 } };
const ollamaGenerate = { model: 'sim-chat', prompt: 'hi', options: { num_predict: 3 } };
const notSupported: Example = { body: { model: 'x' }, status: 501 };
const NO_HASH = '0'.repeat(64);
const owner = { nodeId: 'master', model: '{{chat}}' };
const helper = { nodeId: 'gpu-a', model: '{{helper}}' };

/** The client operations' examples; `model` names the model as the path it is sent on knows it. */
function clientExamples(prefix: string, m: { chat: string; image: string; whisper: string }): Record<string, Example> {
  return {
    [`GET ${prefix}/v1/models`]: {},
    // The worker lists the catalog as clients see it: by public ID.
    [`GET ${prefix}/v1/models/*`]: { params: { model: 'sim-chat' } },
    [`POST ${prefix}/v1/chat/completions`]: {
      body: { ...chat, model: m.chat },
      ...(prefix ? {} : { stream: { ...chat, model: m.chat, stream: true } }),
    },
    [`POST ${prefix}/v1/completions`]: {
      body: { ...completion, model: m.chat },
      ...(prefix ? {} : { stream: { ...completion, model: m.chat, stream: true } }),
    },
    [`POST ${prefix}/v1/embeddings`]: { body: { model: m.chat, input: 'hi' } },
    [`POST ${prefix}/v1/images/generations`]: { body: { model: m.image, prompt: 'a red square', n: 1, size: '64x64' } },
    [`POST ${prefix}/v1/audio/transcriptions`]: { form: { model: m.whisper } },
  };
}

export const EXAMPLES: Record<string, Example> = {
  'GET /health': {},
  'GET /metrics': {},
  'GET /openapi.json': {},
  'GET /docs': {},
  ...clientExamples('', { chat: 'sim-chat', image: 'sim-image', whisper: 'sim-whisper' }),
  'POST /v1/responses': { body: responses, stream: { ...responses, stream: true } },
  'GET /api/version': {},
  'GET /api/tags': {},
  'GET /api/ps': {},
  'POST /api/show': { body: { model: 'sim-chat' } },
  'POST /api/chat': { body: { ...ollamaChat, stream: false }, stream: ollamaChat },
  'POST /api/generate': { body: { ...ollamaGenerate, stream: false }, stream: ollamaGenerate },
  'POST /api/embed': { body: { model: 'sim-chat', input: 'hi' } },
  'POST /api/embeddings': { body: { model: 'sim-chat', prompt: 'hi' } },
  'POST /api/pull': notSupported,
  'POST /api/push': notSupported,
  'POST /api/create': notSupported,
  'POST /api/copy': notSupported,
  'DELETE /api/delete': notSupported,

  'POST /router/v1/console/session': { body: { code: '{{code}}' } },
  'GET /router/v1/console/models': {},
  'POST /router/v1/console/codes': {},
  'GET /router/v1/console/cluster/nodes': {},
  'GET /router/v1/console/cluster/models': {},
  'GET /router/v1/console/lanes': {},
  'GET /router/v1/console/cluster/lanes': {},
  'GET /router/v1/console/models/:localId/logs': { params: { localId: '{{chat}}' }, query: { lines: '5' } },
  'GET /router/v1/console/bench/runs': { query: { limit: '5' } },
  'GET /router/v1/console/bench/runs/:id': { params: { id: 'no-such-run' }, status: 404 },
  'GET /router/v1/console/clusters': {},
  'POST /router/v1/console/clusters': {
    body: { name: 'gpu-a alone', url: '{{slaveUrl}}', token: '{{consoleToken}}' },
    capture: { clusterId: 'id' },
  },
  'PATCH /router/v1/console/clusters/:id': { params: { id: '{{clusterId}}' }, body: { name: 'gpu-a renamed' } },
  'GET /router/v1/console/clusters/:id/console/*': { params: { id: '{{clusterId}}', path: 'lanes' } },
  'POST /router/v1/console/clusters/:id/console/*': { params: { id: 'local', path: 'codes' }, body: {} },
  'PUT /router/v1/console/clusters/:id/console/*': {
    params: { id: 'local', path: 'no-such-route' },
    body: {},
    status: 404,
  },
  'PATCH /router/v1/console/clusters/:id/console/*': {
    params: { id: 'local', path: 'clusters/{{clusterId}}' },
    body: { name: 'gpu-a renamed again' },
  },
  'DELETE /router/v1/console/clusters/:id/console/*': { params: { id: 'local', path: 'no-such-route' }, status: 404 },
  'GET /router/v1/console/clusters/:id/site/*': { params: { id: '{{clusterId}}', path: 'guardians' } },
  'POST /router/v1/console/clusters/:id/site/*': {
    params: { id: 'local', path: 'recipes/no-such-recipe/load' },
    body: {},
    status: 404,
  },
  'PUT /router/v1/console/clusters/:id/site/*': {
    params: { id: 'local', path: 'text-routing-groups/no-such-link' },
    body: {},
    status: 404,
  },
  'PATCH /router/v1/console/clusters/:id/site/*': { params: { id: 'local', path: 'guardians' }, body: {}, status: 404 },
  'DELETE /router/v1/console/clusters/:id/site/*': {
    params: { id: 'local', path: 'recipes/no-such-recipe' },
    status: 404,
  },
  'DELETE /router/v1/console/clusters/:id': { params: { id: '{{clusterId}}' } },
  'GET /router/v1/console/decisions': { query: { limit: '5' } },
  'GET /router/v1/console/decisions/export': { query: { format: 'jsonl', max: '10' } },
  'GET /router/v1/console/timeline': { query: { limit: '10' } },
  'POST /router/v1/console/replay': {
    body: { from: '{{from}}', to: '{{to}}', settings: { offload_probe_idle: '30s' } },
  },
  'GET /router/v1/console/runtime.health': {},
  'GET /router/v1/console/runtime.routing': {},
  'POST /router/v1/console/runtime.setRouting': { body: { strategy: 'round-robin' } },
  'GET /router/v1/console/runtime.upstreams': {},
  'GET /router/v1/console/runtime.scrape': {},
  'GET /router/v1/console/settings': {},
  // The config as read: nothing to write, so no restart.
  'PUT /router/v1/console/settings': { body: { config: '{{config}}' } },
  'GET /router/v1/console/model-configs': {},
  'POST /router/v1/console/model-configs': { body: { config: { name: 'openapi-probe', backend: 'sim' } }, status: 201 },
  'PUT /router/v1/console/model-configs/:name': {
    params: { name: 'openapi-probe' },
    body: { config: { name: 'openapi-probe', backend: 'sim', contextsize: 2048 } },
  },
  'DELETE /router/v1/console/model-configs/:name': { params: { name: 'openapi-probe' } },
  'GET /router/v1/console/model-files': {},
  // A file outside the allowed folders: refused before anything is read.
  'POST /router/v1/console/model-files/inspect': { body: { path: '/etc/hostname' }, status: 403 },
  'GET /router/v1/console/engines': {},
  'GET /router/v1/console/lending': {},
  'GET /router/v1/console/assets/inventory': {},
  'GET /router/v1/console/assets/bindings': { query: { limit: '5' } },
  // The test nodes have no shared root: the default target (`models`) is a config folder, refused before any fetch.
  'POST /router/v1/console/assets/fetch': { body: { nodeId: 'gpu-a', sha256: NO_HASH }, status: 403 },

  'GET /router/v1/site/routing-groups': {},
  'POST /router/v1/site/routing-groups': {
    body: {
      owner: { node_id: 'master', model: '{{painter}}' },
      helper: { node_id: 'gpu-a', model: '{{brush}}' },
      acknowledge_different_weights: true,
    },
    capture: { imageLink: 'id' },
  },
  'PUT /router/v1/site/routing-groups/:id': { params: { id: '{{imageLink}}' }, body: { restore_after_borrow: true } },
  'DELETE /router/v1/site/routing-groups/:id': { params: { id: '{{imageLink}}' } },
  'GET /router/v1/site/routing-groups/candidates': { query: { node: 'master', model: '{{painter}}' } },
  'GET /router/v1/site/text-routing-groups': {},
  'POST /router/v1/site/text-routing-groups': {
    body: {
      owner: { node_id: 'master', model: '{{chat}}' },
      helper: { node_id: 'gpu-a', model: '{{helper}}' },
      acknowledge_different_weights: true,
    },
    capture: { textLink: 'id' },
  },
  'PUT /router/v1/site/text-routing-groups/:id': { params: { id: '{{textLink}}' }, body: { load_if_unloaded: false } },
  'DELETE /router/v1/site/text-routing-groups/:id': { params: { id: '{{textLink}}' } },
  'GET /router/v1/site/text-routing-groups/candidates': { query: { node: 'master', model: '{{chat}}', role: 'owner' } },
  'GET /router/v1/site/guardians': {},
  'PUT /router/v1/site/guardians': { body: { scope: 'cluster', guardian: { node_id: 'gpu-a', model: '{{seer}}' } } },
  'DELETE /router/v1/site/guardians': { body: { scope: 'cluster' } },
  'GET /router/v1/site/recipes': {},
  'PUT /router/v1/site/recipes/:name': {
    params: { name: 'split-chat' },
    body: { name: 'split-chat', components: [{ role: 'text', nodeId: 'master', model: '{{chat}}', backend: 'sim' }] },
    status: 201,
  },
  'GET /router/v1/site/recipes/:name': { params: { name: 'split-chat' } },
  'POST /router/v1/site/recipes/:name/load': { params: { name: 'split-chat' } },
  'DELETE /router/v1/site/recipes/:name': { params: { name: 'split-chat' } },

  'POST /router/v1/node/register': { body: '{{snapshot}}' },
  'GET /router/v1/node/snapshot': {},
  'GET /router/v1/node/master-settings': { query: { node: 'gpu-a' } },
  'GET /router/v1/node/runtime-status': {},
  'GET /router/v1/node/runtime-health': {},
  'GET /router/v1/node/engine-metrics/:localId': { params: { localId: '{{chat}}' } },
  'POST /router/v1/node/offload/event': { body: { owner, trigger: 'tick' } },
  'POST /router/v1/node/offload/relay': {
    body: { requestId: 'contract-relay-1', owner, helper, endpoint: 'chat', json: { ...chat, model: '{{helper}}' } },
  },
  'GET /router/v1/node/offload/state': { node: 'slave' },
  'GET /router/v1/node/offload/borrowed': { node: 'slave' },
  'POST /router/v1/node/offload/withdraw': { node: 'slave', body: { requestIds: ['contract-none'] } },
  'POST /router/v1/node/offload/cancel': { body: { requestIds: ['contract-none'] } },
  'GET /router/v1/node/offload/answer': { node: 'slave', query: { request: 'contract-none' } },
  'POST /router/v1/node/offload/cutoff': { body: { requestId: 'contract-none' } },
  'POST /router/v1/node/offload/lease': { node: 'slave', body: { owner: helper, lease: null } },
  'GET /router/v1/node/offload/lease': { query: { node: 'gpu-a', model: '{{helper}}' } },
  'POST /router/v1/node/links': { node: 'slave', body: '{{linksPush}}' },
  'POST /router/v1/node/guardians': { node: 'slave', body: '{{guardiansPush}}' },
  'GET /router/v1/node/held': {},
  'GET /router/v1/node/active': {},
  'GET /router/v1/node/decisions': { query: { limit: '5' } },
  'GET /router/v1/node/timeline': { query: { limit: '10' } },
  'GET /router/v1/node/replay-source': { query: { from: '{{fromText}}', to: '{{toText}}' } },
  'HEAD /router/v1/node/assets/by-hash/:sha256': { params: { sha256: NO_HASH }, status: 404 },
  'GET /router/v1/node/assets/by-hash/:sha256': { params: { sha256: NO_HASH }, status: 404 },
  'GET /router/v1/node/assets/inventory': {},
  'POST /router/v1/node/load': { body: { localId: '{{chat}}' } },
  ...clientExamples('/router/v1/node/worker', { chat: '{{chat}}', image: '{{painter}}', whisper: '{{ears}}' }),
};

/** Operations without an example (the unit test expects none). */
export const missingExamples = (): string[] =>
  OPERATIONS.map((op) => `${op.method} ${op.path}`).filter((k) => !(k in EXAMPLES));
