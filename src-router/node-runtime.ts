import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Supervisor } from './backends';
import { EXTERNAL_ENGINES, resolveEngineCommand } from './backends/engine-binaries';
import type { NodeConfig } from './config';
import type { ModelConfigRead } from './config/model-config-files';
import { adapterFor, type CliRef } from './engines';
import { type KeySpace, redactRedisUrl } from './kv';
import type { ModelRegistry } from './registry';
import {
  engineBinaryCheck,
  freeSpaceCheck,
  keyspaceReachableCheck,
  portBoundCheck,
  RUNTIME_BLOB_KEY,
  RuntimePublisher,
  readNvidiaGpu,
  runSelfTests,
  type SelfTestCheck,
  type SelfTestResult,
  type ServingConfig,
  storeWritableCheck,
} from './runtime';
import { engineFamilyCheck } from './runtime/engine-family-check';

/** Where a node publishes its runtime blob: the seed's key on a master or standalone node, a per-node key on a slave. */
export const runtimeKeyFor = (config: NodeConfig) =>
  config.cluster.role === 'slave' ? `${RUNTIME_BLOB_KEY}:${config.cluster.node_id}` : RUNTIME_BLOB_KEY;

/** Boot self-tests, in order (RT-6): store, disk, each model config the start skipped, each engine's binary, the keyspace, the port. */
export function bootChecks(
  config: NodeConfig,
  registry: ModelRegistry,
  cli: CliRef,
  keyspace: KeySpace,
  port: number,
  refused: readonly ModelConfigRead[] = [],
): SelfTestCheck[] {
  const checks: SelfTestCheck[] = [
    storeWritableCheck(config.cluster.store_dir),
    freeSpaceCheck(config.cluster.store_dir),
  ];
  // A model config the start skipped: the node runs without it until the file is fixed.
  for (const r of refused) {
    checks.push({
      name: `model config ${basename(r.file)}`,
      run: async () => ({
        status: 'warn',
        detail: `${r.file} refused at ${r.error?.path}: ${r.error?.message}; not served until it is fixed`,
      }),
    });
  }
  const seen = new Set<string>();
  for (const rec of registry.all()) {
    const spec = adapterFor(rec.config, config.backend.mode).launch(rec.config, {
      host: '127.0.0.1',
      port: 0,
      localId: rec.localId,
      cli,
      resolveCommand: resolveEngineCommand,
    });
    const builtin = spec.command === cli.node;
    const key = builtin ? `builtin:${rec.config.backend}` : spec.command;
    if (seen.has(key)) continue;
    seen.add(key);
    checks.push(
      builtin
        ? {
            name: `engine ${rec.config.backend} (built in)`,
            run: async () =>
              existsSync(cli.script)
                ? { status: 'pass', detail: `${cli.script}` }
                : { status: 'fail', detail: `${cli.script} missing: run npm run build` },
          }
        : rec.config.backend in EXTERNAL_ENGINES
          ? engineFamilyCheck(rec.config.backend as keyof typeof EXTERNAL_ENGINES, spec.command)
          : engineBinaryCheck(spec.command, { name: `engine ${rec.config.backend} binary` }),
    );
  }
  checks.push(
    keyspaceReachableCheck(keyspace, { label: config.redis.url ? redactRedisUrl(config.redis.url) : 'embedded' }),
  );
  checks.push(portBoundCheck(config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host, port));
  return checks;
}

/** Serving config of the model the text lane holds (RT-5): only what the router knows; the rest stays absent. */
export function servingConfigOf(registry: ModelRegistry, supervisor: Supervisor): ServingConfig | undefined {
  const lane = supervisor
    .laneStatus()
    .find((l) => (l.lane === 'text' || l.lane === 'shared') && l.loaded && l.state === 'ready');
  const rec = lane && registry.byLocalId(lane.loaded!);
  if (!rec) return undefined;
  const maxModelLen = rec.config.contextsize ?? rec.config.vllm?.settings.max_model_length;
  return { servedModel: rec.publicId, ...(maxModelLen ? { maxModelLen } : {}) };
}

/** Runs the boot diagnostics once, then publishes the blob on an interval (RT-1). */
export async function startRuntimePublishing(opts: {
  config: NodeConfig;
  registry: ModelRegistry;
  supervisor: Supervisor;
  keyspace: KeySpace;
  cli: CliRef;
  port: number;
  version: string;
  startedAt: Date;
  log: FastifyBaseLogger;
  /** Model config files the start skipped: each a warning. */
  refusedModelConfigs?: readonly ModelConfigRead[];
}): Promise<{ publisher: RuntimePublisher; selfTests: SelfTestResult[] }> {
  const selfTests = await runSelfTests(
    bootChecks(opts.config, opts.registry, opts.cli, opts.keyspace, opts.port, opts.refusedModelConfigs),
  );
  for (const t of selfTests) if (t.status !== 'pass') opts.log.warn(`self-test ${t.name}: ${t.status}: ${t.detail}`);
  const publisher = new RuntimePublisher({
    keyspace: opts.keyspace,
    key: runtimeKeyFor(opts.config),
    version: opts.version,
    engine: 'routerdesk',
    startedAt: opts.startedAt,
    selfTests,
    servingConfig: () => servingConfigOf(opts.registry, opts.supervisor),
    mappedModels: () => opts.supervisor.laneStatus().filter((l) => l.loaded && l.state === 'ready').length,
    readGpu: () => readNvidiaGpu(),
    // A model load or switch changes the serving config: republish within a second instead of a whole period.
    changeCheckMs: 1_000,
    onError: (err) => opts.log.warn(`runtime blob not published: ${(err as Error).message}`),
  });
  publisher.start();
  return { publisher, selfTests };
}
