import { z } from 'zod';
import { duration } from './duration';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The bounds of a loop's interval: a shorter one spins a core, a longer one leaves peers or engines unwatched. */
const LOOP = { min: 100, max: HOUR };

/** ROLE-2's placeholder check lives in `contract/` so that the Settings screen hints with the same rule. */
export { isPlaceholderToken, PLACEHOLDER_TOKENS } from '../contract/settings';

const url = z.string().url();

/** The shortest console or operator token a node starts with (a generated one is longer). */
export const MIN_CONSOLE_TOKEN_LENGTH = 16;

export const serverSchema = z
  .object({
    host: z
      .string()
      .default('127.0.0.1')
      .describe('address the node listens on: 127.0.0.1 this machine only, 0.0.0.0 every interface'),
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(8080)
      .describe('port the node listens on; 0: a free port chosen at start (kept across restarts)'),
    body_limit: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024)
      .describe('largest request body in bytes (413 above)'),
    upload_limit: z
      .number()
      .int()
      .positive()
      .default(100 * 1024 * 1024)
      .describe('largest uploaded audio file in bytes'),
    max_queue: z
      .number()
      .int()
      .positive()
      .max(1_000_000)
      .default(1000)
      .describe(
        "requests that may wait on this node for an engine at once (beyond what engines generate at once); more get 429 queue_full with Retry-After; a model config's max_queue bounds one model",
      ),
    write_timeout: duration('60s', { min: SECOND }).describe(
      "a client that takes nothing of an answer for this long is cut off, streamed or not (every API): a stream's engine request is cancelled and the lane freed; what was buffered for it is released and its request recorded as cut off (at least 1s)",
    ),
    headers_timeout: duration('30s', { min: SECOND }).describe(
      'longest a client may take to send its request headers (at least 1s)',
    ),
    request_timeout: duration('5m', { min: SECOND }).describe(
      'longest a client may take to send its whole request (uploads included; at least 1s)',
    ),
    keep_alive_timeout: duration('72s', { min: SECOND }).describe(
      'how long an idle keep-alive connection stays open (longer than the idle time of common client pools, so a reused connection is not closed under a request; at least 1s)',
    ),
    allowed_hosts: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Host names accepted besides IP literals, localhost, this machine's name and cluster.public_url's host (421 otherwise: DNS rebinding)",
      ),
    cors_origins: z
      .array(z.string().min(1))
      .default([])
      .describe('browser Origins allowed besides the node\'s own (403 otherwise); "*" allows any'),
    api_keys: z
      .array(z.string().min(16, 'an API key needs at least 16 characters'))
      .default([])
      .describe(
        'client API keys for /v1/* and /api/* (Authorization: Bearer, at least 16 characters); none = open. Wrong keys count in the per-address token throttle (429 too_many_failed_tokens)',
      ),
    api_keys_file: z
      .string()
      .default('')
      .describe('a file of client API keys, one per line (# comments), a regular file of at most 4 MiB; read at start'),
  })
  .strict();

export const clusterSchema = z
  .object({
    role: z
      .enum(['standalone', 'master', 'slave'])
      .default('standalone')
      .describe(
        'standalone: a cluster of one; master: routes to its slaves and polls them; slave: registers with its master (ROLE-1)',
      ),
    node_id: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore')
      .default('local')
      .describe("this node's ID, unique in the cluster: letters, digits, dot, dash, underscore (ROLE-2)"),
    token: z
      .string()
      .default('')
      .describe(
        'shared by every node of the cluster for the node API; a master or slave refuses an empty or placeholder token (ROLE-2)',
      ),
    master_url: url.optional().describe("the master's URL; required on a slave (ROLE-3)"),
    public_url: url.optional().describe('the URL other nodes reach this node at; required on a slave (ROLE-3)'),
    slave_urls: z
      .array(url)
      .default([])
      .describe('the only URLs a master accepts registrations from and polls (ROLE-4)'),
    store_dir: z
      .string()
      .default('./routerdesk-data')
      .describe('folder of the SQLite store (router.db), the store lock and engines.json (ASSET-1)'),
    sync_interval: duration('10s', LOOP).describe(
      'how often a slave registers its snapshot with the master and reads its settings (HEALTH-1; 100ms to 1h)',
    ),
    health_interval: duration('5s', LOOP).describe(
      'how often a master polls its slaves; a failed poll marks a node unhealthy (HEALTH-2; 100ms to 1h)',
    ),
    request_timeout: duration('10m', { min: SECOND }).describe(
      'longest a proxied request may take before it is cut off (at least 1s)',
    ),
    scheduling_backend_depth: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(2)
      .describe(
        'requests of an enrolled model at its engine at once; more wait in the router queue, where they may be lent (QUEUE-1)',
      ),
    scheduling_refresh_interval: duration('2s', LOOP).describe(
      "how often the master polls every node's lending state and plans leases without a queue event (LEASE-3; 100ms to 1h)",
    ),
    scheduling_min_samples: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe('measured requests a model needs inside the sample window before it has its own cost fit (PRICE-2)'),
    scheduling_sample_window: duration('14d', { timer: false, min: MINUTE }).describe(
      'how far back measured requests count for a cost fit (PRICE-2; at least 1m)',
    ),
    scheduling_context_reserve: z
      .number()
      .int()
      .min(0)
      .default(512)
      .describe('tokens reserved for the answer of a request without max_tokens, in the context gate (LLM-3)'),
    offload_probe_idle: duration('5s').describe(
      'how long a helper not chosen by cost must idle before it gets a one-request probe; twelve times as long when it must switch models (PROBE-1)',
    ),
    offload_restore_delay: duration('1.5s').describe(
      'quiet time before a model displaced by borrowed work or a guardian is loaded back (HELPER-4)',
    ),
    offload_lent_stall_timeout: duration('3m', { min: SECOND }).describe(
      "no change in a helper's lent requests this long: the master checks it and takes them back if it stalled (HELPER-5; at least 1s)",
    ),
    offload_hold_for_faster_helper: z
      .boolean()
      .default(true)
      .describe("an owner may keep its second slot's next request for a helper predicted to finish it sooner (HOLD-1)"),
    offload_decisions_retention: duration('14d', { timer: false, min: MINUTE }).describe(
      'how long decision-log rows are kept (LOG-1; at least 1m)',
    ),
  })
  .strict();

export const modelsSchema = z
  .object({
    config_dir: z
      .string()
      .default('')
      .describe(
        'folder of model configs, one YAML file per model, relative to the config file; empty: no local models, a routing-only master (ROLE-5)',
      ),
    startup_model: z
      .string()
      .default('')
      .describe(
        'public or local ID of a model loaded at start; empty: every model loads on its first request (ROLE-5)',
      ),
    shared_dir: z
      .string()
      .default('')
      .describe(
        'folder assets are served from and fetched into (ASSET-2); the models config folder, the store and the node config file are never an asset source or target (403 protected_folder)',
      ),
    browse_dirs: z
      .array(z.string().min(1, 'a folder path, not empty'))
      .max(64)
      .default([])
      .describe(
        'more folders the Add model dialog may browse and read GGUF headers in, besides models.shared_dir and models.config_dir; relative to the config file',
      ),
    asset_max_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 ** 3)
      .describe('largest asset a fetch from another node may transfer, in bytes (413 above)'),
    stt_selector: z
      .string()
      .default('auto')
      .describe(
        'model name that asks the router to pick a transcription model (STT-2); an absent model means the same',
      ),
  })
  .strict();

export const backendSchema = z
  .object({
    mode: z
      .enum(['llama_sdcpp', 'kobold'])
      .default('llama_sdcpp')
      .describe(
        'llama_sdcpp: text, image and whisper lanes, each its own engine; kobold: one shared KoboldCpp process (HEALTH-3)',
      ),
    load_timeout: duration('2m', { min: SECOND }).describe(
      'longest an engine may take to become healthy (at least 1s)',
    ),
    max_restarts: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe('consecutive failed starts after which a model answers 503 for restart_cooldown'),
    restart_cooldown: duration('30s').describe('how long a model stays failed after max_restarts failed starts'),
    health_interval: duration('10s', LOOP).describe(
      'how often a ready engine is health-checked; one that stops answering is killed and restarted (100ms to 1h)',
    ),
    health_timeout: duration('5s', { min: 100, max: HOUR }).describe(
      'how long a health check of a ready engine may take before it counts as not answering (100ms to 1h)',
    ),
    engine_nice: z
      .number()
      .int()
      .min(0)
      .max(19)
      .default(0)
      .describe(
        'CPU niceness of engine processes: on a CPU-only machine whose engines saturate every core, a positive value keeps the router (proxying, lending relays) responsive',
      ),
  })
  .strict();

export const redisSchema = z
  .object({
    url: z
      .string()
      .optional()
      .describe(
        'Redis URL of the keyspace (redis://host:port); empty or absent: the embedded keyspace (a single node needs no Redis)',
      ),
  })
  .strict();

export const consoleSchema = z
  .object({
    token: z
      .string()
      .refine(
        (t) => t === '' || t.length >= MIN_CONSOLE_TOKEN_LENGTH,
        `a console token needs at least ${MIN_CONSOLE_TOKEN_LENGTH} characters (leave it empty for a generated one)`,
      )
      .default('')
      .describe(
        `the console token (at least ${MIN_CONSOLE_TOKEN_LENGTH} characters); empty: a random one is generated at start`,
      ),
    operators: z
      .array(
        z
          .string()
          .min(
            MIN_CONSOLE_TOKEN_LENGTH,
            `an operator's console token needs at least ${MIN_CONSOLE_TOKEN_LENGTH} characters`,
          ),
      )
      .default([])
      .describe(
        'console tokens of operators (ROUTE-8); the environment variable INFERENCE_ADMIN_EMAILS (EMAIL=TOKEN,…) wins when set',
      ),
    routing_writes_enabled: z
      .boolean()
      .default(true)
      .describe(
        'the deployment gate of routing writes (ROUTE-8); the environment variable INFERENCE_DEPLOY_ENABLED wins when set',
      ),
    remote_timeout: duration('15s', { min: SECOND }).describe(
      'UI-5: how long a remote cluster may take to start answering through this node, and to send the next part of a long answer (twice that; at least 1s)',
    ),
  })
  .strict();

export const staticRouteSchema = z
  .object({
    engine: z
      .string()
      .optional()
      .describe("metrics profile of the upstream's engine, e.g. vllm or llama.cpp (ROUTE-4)"),
    endpoints: z.array(url).min(1).describe('the upstream URLs, taken in turn by the routing strategy'),
  })
  .strict();

export const routingSchema = z
  .object({
    routing_key: z
      .string()
      .min(1)
      .default('clutchcall:inference:routing')
      .describe('keyspace key of the desired routing state; the effective beacon is <key>.effective (ROUTE-6)'),
    strategy: z.string().default('round-robin').describe('strategy used until the routing key says otherwise'),
    poll_interval: duration('5s', LOOP).describe(
      'how often the live routing module reads the routing key and republishes the effective beacon (100ms to 1h)',
    ),
    scrape_interval: duration('2s', LOOP).describe(
      'how often engine /metrics are scraped for metric strategies (100ms to 1h)',
    ),
    static_routes: z
      .record(z.string(), staticRouteSchema)
      .default({})
      .superRefine((routes, ctx) => {
        // Endpoints are shown with their password hidden: two that differ only in it could not be told apart.
        const seen = new Map<string, string>();
        for (const [model, route] of Object.entries(routes))
          route.endpoints.forEach((endpoint, i) => {
            const shown = endpoint.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i, '$1:***@');
            const first = seen.get(shown);
            if (first !== undefined && shown !== endpoint && first !== endpoint)
              ctx.addIssue({
                code: 'custom',
                path: [model, 'endpoints', i],
                message: 'the same upstream and user as another endpoint with another password: keep one',
              });
            if (first === undefined) seen.set(shown, endpoint);
          });
      })
      .describe(
        'public model ID → an OpenAI-compatible upstream the node routes to without supervising it (ROUTE-9); user:password@ in an endpoint is sent as Basic authorization and shown as user:***@',
      ),
  })
  .strict();

export const nodeConfigSchema = z
  .object({
    server: serverSchema.default(() => serverSchema.parse({})),
    cluster: clusterSchema.default(() => clusterSchema.parse({})),
    models: modelsSchema.default(() => modelsSchema.parse({})),
    backend: backendSchema.default(() => backendSchema.parse({})),
    redis: redisSchema.default(() => redisSchema.parse({})),
    console: consoleSchema.default(() => consoleSchema.parse({})),
    routing: routingSchema.default(() => routingSchema.parse({})),
  })
  .strict();

export type NodeConfigInput = z.input<typeof nodeConfigSchema>;
export type NodeConfig = z.output<typeof nodeConfigSchema>;
