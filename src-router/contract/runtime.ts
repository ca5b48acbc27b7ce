import { z } from 'zod';

/**
 * The runtime blob (RT-1..6): what a node publishes about its host and engine at `RUNTIME_BLOB_KEY`, and the only
 * thing `runtime.health` reads. Every field is optional: a field the publisher could not measure is absent, never
 * a substituted zero (RT-2). Unknown keys are dropped on read, so a newer publisher does not break an older console.
 * Lives in `contract/` because the renderer validates `runtime.health` with it; `runtime/blob.ts` re-exports it.
 *
 * Units: bytes for memory sizes, milliseconds for durations, percent 0–100 for utilisation and load,
 * °C for temperature, watts for power, tokens for context lengths.
 */

export const RUNTIME_BLOB_KEY = 'clutchcall:inference:runtime';

const bytes = (what: string) => z.number().nonnegative().describe(`${what}, in bytes`);
const percent = (what: string) => z.number().min(0).max(100).describe(`${what}, percent 0–100`);
const count = (what: string) => z.number().int().nonnegative().describe(what);

export const gpuStatsSchema = z
  .object({
    name: z.string().optional().describe('GPU device name (several devices: "2 × NAME" or the names joined with ", ")'),
    utilization: percent('compute utilisation (mean over devices)').optional(),
    vramUsed: bytes('VRAM in use (sum over devices)').optional(),
    vramTotal: bytes('VRAM total (sum over devices)').optional(),
    temperature: z.number().describe('hottest device temperature, °C').optional(),
    power: z.number().nonnegative().describe('power draw, watts (sum over devices)').optional(),
    powerCap: z.number().nonnegative().describe('power limit, watts (sum over devices)').optional(),
  })
  .describe('GPU gauges; absent when no GPU could be read (no nvidia-smi)');

export const cpuStatsSchema = z
  .object({
    model: z.string().optional().describe('CPU model string'),
    cores: count('logical cores').optional(),
    load: percent('CPU busy time over the last publish interval, all cores').optional(),
    loadavg: z.number().nonnegative().describe('1-minute load average (runnable tasks, not a percent)').optional(),
    tensorParallel: count(
      'tensor-parallel width of the loaded model (same as servingConfig.tensorParallel)',
    ).optional(),
    maxContext: count(
      'maximum context length of the loaded model, tokens (same as servingConfig.maxModelLen)',
    ).optional(),
  })
  .describe('CPU gauges');

export const memoryStatsSchema = z
  .object({
    total: bytes('host RAM total').optional(),
    used: bytes('host RAM in use (total − available)').optional(),
    mappedModels: count('number of models loaded (memory-mapped) by the engines').optional(),
    pageCache: bytes('page cache (/proc/meminfo Cached)').optional(),
    swap: bytes('swap in use (SwapTotal − SwapFree)').optional(),
  })
  .describe('host memory gauges');

export const selfTestResultSchema = z
  .object({
    name: z.string().describe('diagnostic name, as the publisher names it'),
    detail: z.string().describe('one-line result: which device, path or endpoint'),
    ms: z.number().nonnegative().describe('time the check took, milliseconds'),
    status: z.string().describe('"pass", "warn", anything else is a failure (this router publishes "fail")'),
  })
  .describe('one boot diagnostic');

export const servingConfigSchema = z
  .object({
    servedModel: z.string().optional().describe('model name clients use in requests'),
    tensorParallel: count('GPUs holding shards of the weights in one runtime instance').optional(),
    gpuMemUtil: z.number().min(0).max(1).describe('fraction 0–1 of GPU memory the server may pre-allocate').optional(),
    maxModelLen: count('maximum context length, tokens').optional(),
    dtype: z.string().optional().describe('weight and activation datatype loaded'),
  })
  .describe('serving config of the loaded model');

export const runtimeBlobSchema = z
  .object({
    host: z.string().optional().describe('hostname of the machine running the node'),
    version: z.string().optional().describe('version string of the publisher'),
    uptime: z.number().nonnegative().optional().describe('process uptime, milliseconds'),
    engine: z.string().optional().describe('engine the runtime names itself as'),
    gpu: gpuStatsSchema.optional(),
    cpu: cpuStatsSchema.optional(),
    memory: memoryStatsSchema.optional(),
    selfTests: z.array(selfTestResultSchema).optional().describe('boot diagnostics, in the order they ran'),
    servingConfig: servingConfigSchema.optional(),
  })
  .describe('runtime blob published at clutchcall:inference:runtime');

export type GpuStats = z.infer<typeof gpuStatsSchema>;
export type CpuStats = z.infer<typeof cpuStatsSchema>;
export type MemoryStats = z.infer<typeof memoryStatsSchema>;
export type SelfTestResult = z.infer<typeof selfTestResultSchema>;
export type ServingConfig = z.infer<typeof servingConfigSchema>;
export type RuntimeBlob = z.infer<typeof runtimeBlobSchema>;

// Reading (RT-2): one bad field never hides the rest. A field that is absent or malformed reads as absent (`—` on
// screen); a self-test entry keeps the fields it has; an entry that is not an object reads as an empty entry. The
// publisher writes with `runtimeBlobSchema` (every field checked); readers use `runtimeBlobReadSchema`.

/** Each field of an object schema, optional, and absent when malformed. */
function lenientShape<S extends z.ZodRawShape>(shape: S) {
  return Object.fromEntries(
    Object.entries(shape).map(([k, v]) => [k, (v as z.ZodType).optional().catch(undefined)]),
  ) as unknown as {
    [K in keyof S]: z.ZodCatch<z.ZodOptional<S[K]>>;
  };
}
const lenientObject = <S extends z.ZodRawShape>(o: z.ZodObject<S>) =>
  z.object(lenientShape(o.shape)).optional().catch(undefined);

/** A self-test entry as read: what it has (RT-2). */
export const selfTestEntrySchema = z
  .object(lenientShape(selfTestResultSchema.shape))
  .catch({})
  .describe('one boot diagnostic as read: malformed fields absent');

export const runtimeBlobReadSchema = z
  .object({
    ...lenientShape({
      host: runtimeBlobSchema.shape.host,
      version: runtimeBlobSchema.shape.version,
      uptime: runtimeBlobSchema.shape.uptime,
      engine: runtimeBlobSchema.shape.engine,
    }),
    gpu: lenientObject(gpuStatsSchema),
    cpu: lenientObject(cpuStatsSchema),
    memory: lenientObject(memoryStatsSchema),
    selfTests: z.array(selfTestEntrySchema).optional().catch(undefined),
    servingConfig: lenientObject(servingConfigSchema),
  })
  .describe('runtime blob as read: a malformed field is absent, the rest kept (RT-2)');

export type RuntimeBlobView = z.infer<typeof runtimeBlobReadSchema>;
export type SelfTestEntry = z.infer<typeof selfTestEntrySchema>;

/** What `runtime.health` answers: the blob (its malformed fields dropped and named), or that nothing readable is published and why. */
export const runtimeHealthSchema = z.discriminatedUnion('published', [
  z.object({
    published: z.literal(false),
    reason: z.string().optional().describe('absent when simply nothing is published'),
  }),
  z.object({
    published: z.literal(true),
    blob: runtimeBlobReadSchema,
    malformed: z
      .array(z.string())
      .optional()
      .describe('paths of fields dropped because they were malformed (e.g. selfTests.1.ms)'),
  }),
]);
export type RuntimeHealth = z.infer<typeof runtimeHealthSchema>;

// ---------------------------------------------------------------------------------------------------------------
// The Routing card's procedures (ROUTE-1..9): `runtime.routing`, `runtime.setRouting`, `runtime.upstreams`.
// The server builds these answers from routing/ (RoutingView, LiveRoutingStatus, UpstreamRow);
// test/unit/runtime-contract.test.ts keeps both sides the same shape.

/** Where a strategy in force came from, as the reporting module says. */
export const effectiveSourceSchema = z.enum(['routing_key', 'config_default', 'fallback_invalid_spec']);

/** The beacon at `<routing key>.effective`: what a live module has applied. */
export const effectiveRoutingSchema = z
  .object({ strategy: z.string(), routes_engine: z.string().nullable(), source: effectiveSourceSchema })
  .strict();

/** What was last published at the routing key. */
export const desiredRoutingSchema = z.object({ strategy: z.string(), routes_engine: z.string().nullable() }).strict();

export const routingStrategyInfoSchema = z
  .object({
    name: z.string(),
    label: z.string(),
    requires: z.array(z.string()).describe('scraped router metrics the strategy needs to score at all'),
    weightable: z.boolean(),
  })
  .strict();

/** One metric profile (ROUTE-4): the engine names it reads and the router metrics they can fill. */
export const metricProfileInfoSchema = z
  .object({
    name: z.string(),
    reads: z.array(z.string()).describe('engine /metrics names the profile reads'),
    provides: z
      .array(z.string())
      .describe('router metrics it fills; a strategy requiring others stays cold (random) for such pods'),
  })
  .strict();

/** This node's live module, for diagnostics (its own view; `effective` above is any node's beacon). */
export const liveRoutingStatusSchema = z
  .object({
    routingKey: z.string(),
    desired: z.object({ strategy: z.string(), routes_engine: z.string().nullable().optional() }).strict().nullable(),
    effective: effectiveRoutingSchema,
    invalidReason: z.string().nullable(),
    reporting: z.boolean(),
    lastError: z.string().nullable(),
    lastPollAt: z.number().nullable(),
    fallbackCount: z.number(),
  })
  .strict();

export const routingViewSchema = z
  .object({
    routingKey: z.string(),
    strategies: z.array(routingStrategyInfoSchema),
    multiScorers: z.array(z.string()),
    profiles: z.array(metricProfileInfoSchema),
    desired: desiredRoutingSchema.nullable(),
    effective: effectiveRoutingSchema.nullable(),
    engineReporting: z.boolean(),
    inSync: z.boolean(),
    writable: z.boolean(),
    canWrite: z.boolean(),
    defaultMultiSpec: z.string(),
    keyspaceReachable: z.boolean(),
    gate: z
      .object({ deployment: z.string(), operators: z.string() })
      .strict()
      .describe('config keys of the two write gates (ROUTE-8)'),
    status: liveRoutingStatusSchema,
  })
  .strict();

/** `POST runtime.setRouting` body: `routesEngine` only when the operator picked a profile (ROUTE-5). */
export const setRoutingRequestSchema = z
  .object({ strategy: z.string({ error: 'strategy is required' }), routesEngine: z.string().optional() })
  .strict();
export const setRoutingAnswerSchema = z
  .object({ desired: z.object({ strategy: z.string(), routes_engine: z.string().optional() }).strict() })
  .strict();

export const upstreamStatusSchema = z.enum(['untried', 'answering', 'not_answering']);

export const upstreamRowSchema = z
  .object({
    model: z.string(),
    endpoint: z.string(),
    engine: z.string().nullable(),
    status: upstreamStatusSchema,
    answered: z.number().int().nonnegative(),
    notAnswered: z.number().int().nonnegative(),
    lastAnswerAt: z.number().nullable(),
    lastAnswer: z.string().describe('ISO time of the last answer, or `never`'),
  })
  .strict();

export const upstreamsAnswerSchema = z.object({ upstreams: z.array(upstreamRowSchema) }).strict();

/** Any router API error body (`type`, `param`, `code` and extras may accompany the message). */
export const apiErrorBodySchema = z.object({
  error: z.object({ message: z.string(), param: z.string().nullable().optional(), code: z.string().optional() }),
});

export type EffectiveRoutingWire = z.infer<typeof effectiveRoutingSchema>;
export type RoutingStrategyInfo = z.infer<typeof routingStrategyInfoSchema>;
export type MetricProfileInfo = z.infer<typeof metricProfileInfoSchema>;
export type RoutingViewWire = z.infer<typeof routingViewSchema>;
export type SetRoutingRequest = z.infer<typeof setRoutingRequestSchema>;
export type SetRoutingAnswer = z.infer<typeof setRoutingAnswerSchema>;
export type UpstreamStatusWire = z.infer<typeof upstreamStatusSchema>;
export type UpstreamRowWire = z.infer<typeof upstreamRowSchema>;
export type UpstreamsAnswer = z.infer<typeof upstreamsAnswerSchema>;
