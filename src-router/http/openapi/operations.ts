import { LINK_LANE_PATHS } from '../../lending/links/link-schema';
import type { QueryName, SchemaName } from './schemas';

/**
 * Every HTTP operation the node serves, as the API document states it. A unit test holds this list against the
 * routes fastify registered: a route missing here (and not in `UNDOCUMENTED`) fails it, and so does an operation no
 * route serves. Paths are written as fastify registers them (`:param`, a trailing `*`).
 */

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/**
 * Who may call: nobody needs a token (`none`); a client API key when `server.api_keys` is set (`clientKey`); the
 * console token or an operator's (`console`); an operator's token (`operator`); the cluster token (`cluster`).
 */
export type Security = 'none' | 'clientKey' | 'console' | 'operator' | 'cluster';
export type Media = 'json' | 'sse' | 'ndjson' | 'text' | 'csv' | 'html' | 'binary' | 'prometheus';
export type Tag = 'Operations' | 'OpenAI' | 'Ollama' | 'Console' | 'Site' | 'Node' | 'Node worker';

export interface Content {
  media: Media;
  /** The body's schema (JSON media); for `sse` and `ndjson`, the schema of each event or line. */
  schema?: SchemaName;
}

export interface Answer {
  description: string;
  content?: Content[];
}

export interface Operation {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  tag: Tag;
  security: Security;
  /** Path parameters by name (the wildcard `*` by the name given here), with their meaning. */
  params?: Record<string, string>;
  /** The name the document gives the trailing wildcard `*`. */
  wildcard?: string;
  query?: QueryName;
  body?: { schema: SchemaName; media?: 'json' | 'multipart'; required?: boolean };
  /** Answers by status; every operation also has the error answer of its API (`default`). */
  answers: Record<number, Answer>;
}

const json = (schema: SchemaName, description = 'OK'): Answer => ({
  description,
  content: [{ media: 'json', schema }],
});
const noContent: Answer = { description: 'Done; no body' };

/** The OpenAI-compatible client operations; the node API serves the same ones again under `/router/v1/node/worker`. */
function openaiOperations(prefix: string, tag: Tag, security: Security): Operation[] {
  const forMaster = prefix
    ? ' A master forwards a request here with the model named by its local ID on this node; it is never forwarded again.'
    : '';
  return [
    {
      method: 'GET',
      path: `${prefix}/v1/models`,
      summary: 'List the models this node serves',
      tag,
      security,
      answers: { 200: json('ModelList') },
    },
    {
      method: 'GET',
      path: `${prefix}/v1/models/*`,
      wildcard: 'model',
      params: { model: 'a model ID (may hold slashes: `org/model`)' },
      summary: 'One model',
      tag,
      security,
      answers: { 200: json('Model') },
    },
    {
      method: 'POST',
      path: `${prefix}/v1/chat/completions`,
      summary: 'Chat completion',
      tag,
      security,
      body: { schema: 'ChatRequest' },
      description: `Routed, queued and lent like every request of its model; \`stream: true\` answers server-sent events (\`data: <chunk>\`, then \`data: [DONE]\`); while queued, a stream sends \`: queued …\` comments.${forMaster}`,
      answers: {
        200: {
          description: 'The completion, or its stream',
          content: [
            { media: 'json', schema: 'ChatCompletion' },
            { media: 'sse', schema: 'ChatCompletionChunk' },
          ],
        },
      },
    },
    {
      method: 'POST',
      path: `${prefix}/v1/completions`,
      summary: 'Text completion',
      tag,
      security,
      body: { schema: 'CompletionRequest' },
      description: `\`stream: true\` answers server-sent events.${forMaster}`,
      answers: {
        200: {
          description: 'The completion, or its stream',
          content: [
            { media: 'json', schema: 'Completion' },
            { media: 'sse', schema: 'Completion' },
          ],
        },
      },
    },
    {
      method: 'POST',
      path: `${prefix}/v1/embeddings`,
      summary: 'Embeddings',
      tag,
      security,
      body: { schema: 'EmbeddingRequest' },
      answers: { 200: json('Embeddings') },
    },
    {
      method: 'POST',
      path: `${prefix}/v1/images/generations`,
      summary: 'Image generation',
      tag,
      security,
      body: { schema: 'ImageRequest' },
      answers: { 200: json('Images') },
    },
    {
      method: 'POST',
      path: `${prefix}/v1/audio/transcriptions`,
      summary: 'Transcribe audio',
      tag,
      security,
      body: { schema: 'TranscriptionForm', media: 'multipart' },
      description:
        'A multipart/form-data upload with `file` and `model`; `response_format` text, srt or vtt answers plain text.',
      answers: {
        200: {
          description: 'The transcription',
          content: [{ media: 'json', schema: 'Transcription' }, { media: 'text' }],
        },
      },
    },
  ];
}

const ollama = (
  path: string,
  summary: string,
  request: SchemaName,
  answer: SchemaName,
  streams = false,
): Operation => ({
  method: 'POST',
  path,
  summary,
  tag: 'Ollama',
  security: 'clientKey',
  body: { schema: request },
  ...(streams
    ? {
        description:
          "Streams by default (Ollama's rule): one JSON object per line (`application/x-ndjson`); `stream: false` answers one object. No messages or prompt: the model is loaded.",
      }
    : {}),
  answers: {
    200: {
      description: 'OK',
      content: [{ media: 'json', schema: answer }, ...(streams ? [{ media: 'ndjson' as const, schema: answer }] : [])],
    },
  },
});

const notSupported = (method: Method, path: string): Operation => ({
  method,
  path,
  summary: `Not supported (${path.slice(5)})`,
  tag: 'Ollama',
  security: 'clientKey',
  description:
    'Models on this node are managed through model configs (one YAML file per model), not through the Ollama API.',
  answers: { 501: { description: 'Not supported', content: [{ media: 'json', schema: 'OllamaError' }] } },
});

function linkOperations(): Operation[] {
  return Object.entries(LINK_LANE_PATHS).flatMap(([lane, path]): Operation[] => [
    {
      method: 'GET',
      path,
      summary: `List ${lane} links`,
      tag: 'Site',
      security: 'console',
      answers: { 200: json('LinkList') },
    },
    {
      method: 'POST',
      path,
      summary: `Create a ${lane} link`,
      tag: 'Site',
      security: 'operator',
      body: { schema: 'LinkCreate' },
      description:
        'An owner model lends its queued requests to a helper model (LINK-1..4); kept by the master and pushed to slaves (a slave answers 409).',
      answers: { 201: json('Link', 'Created') },
    },
    {
      method: 'PUT',
      path: `${path}/:id`,
      params: { id: 'the link ID' },
      summary: `Change a ${lane} link's flags`,
      tag: 'Site',
      security: 'operator',
      body: { schema: 'LinkUpdate' },
      answers: { 200: json('Link') },
    },
    {
      method: 'DELETE',
      path: `${path}/:id`,
      params: { id: 'the link ID' },
      summary: `Delete a ${lane} link`,
      tag: 'Site',
      security: 'operator',
      answers: { 204: noContent },
    },
    {
      method: 'GET',
      path: `${path}/candidates`,
      query: 'CandidateQuery',
      summary: `Candidates for a ${lane} link`,
      tag: 'Site',
      security: 'console',
      description:
        'Every model that could be the other end of a link anchored at `node`/`model`; ineligible ones with the reason.',
      answers: { 200: json('LinkCandidates') },
    },
  ]);
}

const RECIPES = '/router/v1/site/recipes';

export const OPERATIONS: readonly Operation[] = [
  // Operations
  {
    method: 'GET',
    path: '/health',
    summary: 'Liveness',
    tag: 'Operations',
    security: 'none',
    answers: { 200: json('Health') },
  },
  {
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tag: 'Operations',
    security: 'none',
    answers: { 200: { description: 'Prometheus text format', content: [{ media: 'prometheus' }] } },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API document (OpenAPI 3.1)',
    tag: 'Operations',
    security: 'none',
    answers: { 200: json('AnyObject', 'The document') },
  },
  {
    method: 'GET',
    path: '/docs',
    summary: 'This API document as a page',
    tag: 'Operations',
    security: 'none',
    answers: { 200: { description: 'HTML', content: [{ media: 'html' }] } },
  },

  // OpenAI-compatible client API
  ...openaiOperations('', 'OpenAI', 'clientKey'),
  {
    method: 'POST',
    path: '/v1/responses',
    summary: 'Responses API (text models)',
    tag: 'OpenAI',
    security: 'clientKey',
    body: { schema: 'ResponsesRequest' },
    description:
      'Translated to a chat completion and run as one; `stream: true` answers named server-sent events (`event: <type>`).',
    answers: {
      200: {
        description: 'The response, or its events',
        content: [
          { media: 'json', schema: 'Response' },
          { media: 'sse', schema: 'ResponseEvent' },
        ],
      },
    },
  },

  // Ollama-compatible client API
  {
    method: 'GET',
    path: '/api/version',
    summary: 'Version',
    tag: 'Ollama',
    security: 'clientKey',
    answers: { 200: json('OllamaVersion') },
  },
  {
    method: 'GET',
    path: '/api/tags',
    summary: 'List models',
    tag: 'Ollama',
    security: 'clientKey',
    answers: { 200: json('OllamaTags') },
  },
  {
    method: 'GET',
    path: '/api/ps',
    summary: 'Loaded models',
    tag: 'Ollama',
    security: 'clientKey',
    answers: { 200: json('OllamaPs') },
  },
  ollama('/api/show', 'Show a model', 'OllamaShowRequest', 'OllamaShow'),
  ollama('/api/chat', 'Chat', 'OllamaChatRequest', 'OllamaGeneration', true),
  ollama('/api/generate', 'Generate', 'OllamaGenerateRequest', 'OllamaGeneration', true),
  ollama('/api/embed', 'Embeddings', 'OllamaEmbedRequest', 'OllamaEmbed'),
  ollama('/api/embeddings', 'Embedding (older API)', 'OllamaEmbedRequest', 'OllamaEmbedding'),
  notSupported('POST', '/api/pull'),
  notSupported('POST', '/api/push'),
  notSupported('POST', '/api/create'),
  notSupported('POST', '/api/copy'),
  notSupported('DELETE', '/api/delete'),

  // Console API
  {
    method: 'POST',
    path: '/router/v1/console/session',
    summary: 'Exchange a one-time code for the console token',
    tag: 'Console',
    security: 'none',
    body: { schema: 'ConsoleSessionRequest' },
    description:
      'The code comes from the link `routerdesk serve` opens (or `POST /router/v1/console/codes`); it works once. A wrong code counts in the per-address throttle.',
    answers: { 200: json('ConsoleSession') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/models',
    summary: "This node's models and engines",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ConsoleModelList') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/codes',
    summary: 'Issue a one-time console code',
    tag: 'Console',
    security: 'console',
    body: { schema: 'ConsoleCodeRequest', required: false },
    description: 'The code lives 60 s, or `expiresInMs` (at most 10 minutes: a link printed for an operator).',
    answers: { 200: json('ConsoleCode') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/cluster/nodes',
    summary: 'Nodes of the cluster',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ClusterNodes') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/cluster/models',
    summary: 'Models of the cluster with their sources',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ClusterModels') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/lanes',
    summary: "This node's runtime lanes",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('Lanes') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/cluster/lanes',
    summary: 'Runtime lanes of every node',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ClusterLanes') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/models/:localId/logs',
    params: { localId: 'a local model ID' },
    query: 'LogLinesQuery',
    summary: "An engine's last log lines",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ModelLogs') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/bench/runs',
    query: 'BenchRunListQuery',
    summary: "Benchmark runs kept in this node's store",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('BenchRunList') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/bench/runs/:id',
    params: { id: 'a run ID' },
    summary: 'One benchmark run with its rows',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('BenchRunDetail') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/clusters',
    summary: 'The local cluster and every connection profile',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('ClusterList') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/clusters',
    summary: 'Add a connection profile',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'ClusterProfileCreate' },
    description: 'The remote is called once with the token before the profile is kept; the token is never shown again.',
    answers: { 201: json('ClusterView', 'Created') },
  },
  {
    method: 'PATCH',
    path: '/router/v1/console/clusters/:id',
    params: { id: 'a profile ID' },
    summary: 'Change a connection profile',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'ClusterProfilePatch' },
    answers: { 200: json('ClusterView') },
  },
  ...(['console', 'site'] as const).flatMap((api) =>
    (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map(
      (method): Operation => ({
        method,
        path: `/router/v1/console/clusters/:id/${api}/*`,
        wildcard: 'path',
        params: {
          id: 'a profile ID, or `local` for this node',
          path: `a path under /router/v1/${api}/ on that cluster`,
        },
        summary: `Call another cluster's ${api} API`,
        tag: 'Console',
        security: method === 'GET' ? 'console' : 'operator',
        description: `Forwarded to \`/router/v1/${api}/<path>\` there with the profile's stored token; the answer is that API's, passed on.`,
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: { schema: 'AnyObject' as const, required: false } }),
        answers: { 200: json('AnyObject', "The remote's answer, as it came") },
      }),
    ),
  ),
  {
    method: 'DELETE',
    path: '/router/v1/console/clusters/:id',
    params: { id: 'a profile ID' },
    summary: 'Remove a connection profile',
    tag: 'Console',
    security: 'operator',
    answers: { 204: noContent },
  },
  {
    method: 'GET',
    path: '/router/v1/console/decisions',
    query: 'DecisionQuery',
    summary: "The cluster's decision log, newest first",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('DecisionPage') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/decisions/export',
    query: 'DecisionExportQuery',
    summary: 'Export the decision log',
    tag: 'Console',
    security: 'console',
    answers: {
      200: {
        description: 'CSV (default) or JSON Lines, as a download',
        content: [{ media: 'csv' }, { media: 'ndjson', schema: 'AnyObject' }],
      },
    },
  },
  {
    method: 'GET',
    path: '/router/v1/console/timeline',
    query: 'TimeRangeQuery',
    summary: "Every node's request and load analytics for a range",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('TimelinePage') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/replay',
    summary: 'What-if replay of a recorded range',
    tag: 'Console',
    security: 'console',
    body: { schema: 'ReplayRequest' },
    answers: { 200: json('ReplayResult') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/runtime.health',
    query: 'OptionalNodeQuery',
    summary: "A node's runtime blob",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('RuntimeHealth') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/runtime.routing',
    summary: 'Desired and effective routing',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('RoutingView') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/runtime.setRouting',
    summary: 'Publish the desired routing strategy',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'SetRoutingRequest' },
    description: "Needs both write gates (the deployment's and an operator's token).",
    answers: { 200: json('SetRoutingAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/runtime.upstreams',
    summary: 'Routed upstreams',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('Upstreams') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/runtime.scrape',
    summary: 'Scraped engine metrics',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('Scrape') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/settings',
    summary: 'The node config (secrets masked) with its JSON Schema',
    tag: 'Console',
    security: 'operator',
    answers: { 200: json('SettingsView') },
  },
  {
    method: 'PUT',
    path: '/router/v1/console/settings',
    summary: 'Write the node config and restart on it',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'SettingsPut' },
    description:
      'Validated as start-up validates it (a 400 names the field path, nothing is written); the old file is kept as `.bak`.',
    answers: { 200: json('SettingsAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/model-configs',
    summary: "The model configs of this node's models folder, each with its error and the config in force",
    tag: 'Console',
    security: 'operator',
    answers: { 200: json('ModelConfigList') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/model-configs',
    summary: 'Create a model config in the models folder; taken in without a restart',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'ModelConfigWrite' },
    description:
      'Validated as start-up validates a model config (a 400 names the field in `param`, nothing is written); 409 when the name or file exists.',
    answers: { 201: json('ModelConfigWritten', 'Created') },
  },
  {
    method: 'PUT',
    path: '/router/v1/console/model-configs/:name',
    params: { name: 'a model name or config file stem' },
    summary: 'Replace a model config; a loaded engine switches when its lane is idle',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'ModelConfigWrite' },
    answers: { 200: json('ModelConfigWritten', 'Replaced') },
  },
  {
    method: 'DELETE',
    path: '/router/v1/console/model-configs/:name',
    params: { name: 'a model name or config file stem' },
    summary: 'Remove a model config; answers once its running requests ended and its engine stopped',
    tag: 'Console',
    security: 'operator',
    answers: { 200: json('ModelConfigRemoved') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/model-files',
    query: 'ModelFilesQuery',
    summary:
      'List a folder the node may read model files from (models.shared_dir, models.config_dir, models.browse_dirs)',
    tag: 'Console',
    security: 'operator',
    description: 'Checked by real path: a folder outside the allowed ones (through a symlink or `..` too) is a 403.',
    answers: { 200: json('ModelFileList') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/model-files/inspect',
    summary:
      "What a GGUF file's header says: architecture, context length, embedding, vision projector, suggested capabilities",
    tag: 'Console',
    security: 'operator',
    body: { schema: 'ModelFileInspectRequest' },
    answers: { 200: json('ModelFileInspection') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/engines',
    summary:
      'The engines this node can run: built-in ones and each external binary found on PATH or in the engines cache, with its version',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('Engines') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/lending',
    summary: 'Leases, lending settings, held and active requests of every node',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('LendingView') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/assets/inventory',
    query: 'InventoryQuery',
    summary: "This node's file roots and their files",
    tag: 'Console',
    security: 'console',
    answers: { 200: json('AssetInventory') },
  },
  {
    method: 'GET',
    path: '/router/v1/console/assets/bindings',
    query: 'BindingsQuery',
    summary: 'How model configs were bound to files',
    tag: 'Console',
    security: 'console',
    answers: { 200: json('AssetBindings') },
  },
  {
    method: 'POST',
    path: '/router/v1/console/assets/fetch',
    summary: 'Fetch a file by hash from another node',
    tag: 'Console',
    security: 'operator',
    body: { schema: 'AssetFetchRequest' },
    answers: { 200: json('AssetFetch') },
  },

  // Site API
  ...linkOperations(),
  {
    method: 'GET',
    path: '/router/v1/site/guardians',
    summary: 'Guardian settings and the effective guardian of every text-only model',
    tag: 'Site',
    security: 'console',
    answers: { 200: json('GuardiansView') },
  },
  {
    method: 'PUT',
    path: '/router/v1/site/guardians',
    summary: 'Set a guardian',
    tag: 'Site',
    security: 'operator',
    body: { schema: 'GuardianPut' },
    answers: { 200: json('GuardianSetting') },
  },
  {
    method: 'DELETE',
    path: '/router/v1/site/guardians',
    summary: 'Remove a guardian setting',
    tag: 'Site',
    security: 'operator',
    body: { schema: 'GuardianDelete' },
    answers: { 204: noContent },
  },
  {
    method: 'GET',
    path: RECIPES,
    summary: 'Split recipes',
    tag: 'Site',
    security: 'console',
    answers: { 200: json('RecipeList') },
  },
  {
    method: 'PUT',
    path: `${RECIPES}/:name`,
    params: { name: 'the recipe name (its public model ID)' },
    summary: 'Create or replace a recipe',
    tag: 'Site',
    security: 'operator',
    body: { schema: 'Recipe' },
    answers: { 200: json('StoredRecipe', 'Replaced'), 201: json('StoredRecipe', 'Created') },
  },
  {
    method: 'GET',
    path: `${RECIPES}/:name`,
    params: { name: 'the recipe name (its public model ID)' },
    summary: 'One recipe',
    tag: 'Site',
    security: 'console',
    answers: { 200: json('StoredRecipe') },
  },
  {
    method: 'POST',
    path: `${RECIPES}/:name/load`,
    params: { name: 'the recipe name' },
    summary: 'Load every component of a recipe',
    tag: 'Site',
    security: 'operator',
    answers: { 200: json('RecipeLoad'), 502: json('RecipeLoad', 'A component failed to load (with `error`)') },
  },
  {
    method: 'DELETE',
    path: `${RECIPES}/:name`,
    params: { name: 'the recipe name' },
    summary: 'Delete a recipe',
    tag: 'Site',
    security: 'operator',
    answers: { 204: noContent },
  },

  // Node API
  {
    method: 'POST',
    path: '/router/v1/node/register',
    summary: 'A slave registers with its master',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'NodeSnapshot' },
    answers: { 200: json('RegisterAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/snapshot',
    summary: "This node's models and settings hash",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('NodeSnapshot') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/master-settings',
    query: 'NodeQuery',
    summary: 'The links and guardian settings a slave runs (master only)',
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('MasterSettings') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/runtime-status',
    summary: "This node's engines and lanes",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('RuntimeStatus') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/runtime-health',
    summary: "This node's runtime blob",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('RuntimeHealth') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/engine-metrics/:localId',
    params: { localId: 'a local model ID' },
    summary: "A running engine's own metrics",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: { description: "The engine's answer, as it came", content: [{ media: 'text' }] } },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/event',
    summary: "An owner's queue event (master only)",
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'OffloadEvent' },
    answers: { 200: json('EventAnswer') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/relay',
    summary: 'Run a lent request on its helper (master only)',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'RelayRequest' },
    answers: { 200: json('RelayAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/offload/state',
    summary: "A slave's lending state",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('LendingNodeState') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/offload/borrowed',
    summary: 'Borrowed jobs a helper runs (slave only)',
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('BorrowedAnswer') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/withdraw',
    summary: 'Withdraw lent requests at their helper',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'WithdrawRequest' },
    answers: { 200: json('WithdrawAnswer') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/cancel',
    summary: 'Cancel borrowed requests whose client left',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'WithdrawRequest' },
    answers: { 200: json('CancelAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/offload/answer',
    query: 'BorrowedAnswerQuery',
    summary: "A borrowed request's answer (long-polled)",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('BorrowedAnswerState') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/cutoff',
    summary: 'Cut off an overdue lent request (master only)',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'CutoffRequest' },
    answers: { 200: json('CutAnswer') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/offload/lease',
    summary: "The master's push of an owner's lease (slave only)",
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'LeasePush' },
    answers: { 200: json('LeasePushAnswer') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/offload/lease',
    query: 'OwnerQuery',
    summary: 'The lease the master holds for an owner (master only)',
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('EventAnswer') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/links',
    summary: "The master's push of its links (slave only)",
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'LinksPush' },
    answers: { 200: json('PushApplied') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/guardians',
    summary: "The master's push of its guardian settings (slave only)",
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'GuardiansPush' },
    answers: { 200: json('PushApplied') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/held',
    summary: "This node's held and queued requests",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('HeldNode') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/active',
    summary: "This node's running requests",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('ActiveNode') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/decisions',
    query: 'DecisionQuery',
    summary: "This node's decision log",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('DecisionPage') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/timeline',
    query: 'TimeRangeQuery',
    summary: "This node's request and load analytics",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('TimelineNode') },
  },
  {
    method: 'GET',
    path: '/router/v1/node/replay-source',
    query: 'ReplaySourceQuery',
    summary: "This node's recorded rows for a replay",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('ReplaySource') },
  },
  ...(['HEAD', 'GET'] as const).map(
    (method): Operation => ({
      method,
      path: '/router/v1/node/assets/by-hash/:sha256',
      params: { sha256: "the file's sha256 (64 hex digits)" },
      summary: method === 'GET' ? 'A file by its verified hash (ranges)' : "A file's size and type by its hash",
      tag: 'Node',
      security: 'cluster',
      answers: {
        200: { description: 'The file', content: method === 'GET' ? [{ media: 'binary' }] : [] },
        206: { description: 'The asked range', content: method === 'GET' ? [{ media: 'binary' }] : [] },
      },
    }),
  ),
  {
    method: 'GET',
    path: '/router/v1/node/assets/inventory',
    query: 'InventoryQuery',
    summary: "This node's file roots and their files",
    tag: 'Node',
    security: 'cluster',
    answers: { 200: json('AssetInventory') },
  },
  {
    method: 'POST',
    path: '/router/v1/node/load',
    summary: 'Load a local model config',
    tag: 'Node',
    security: 'cluster',
    body: { schema: 'NodeLoadRequest' },
    answers: { 200: json('NodeLoad') },
  },
  ...openaiOperations('/router/v1/node/worker', 'Node worker', 'cluster'),
];

/** A registered route the document leaves out, and why. */
export interface Undocumented {
  method: Method;
  path: string;
  reason: string;
}

/** Routes deliberately left out of the document (`HEAD` of a documented `GET` is covered by that `GET`). */
export const UNDOCUMENTED: readonly Undocumented[] = [];

/** Routes registered with this `config.undocumented` reason are left out (the UI build's static files). */
export const STATIC_FILES_REASON = "the UI build's static files";
