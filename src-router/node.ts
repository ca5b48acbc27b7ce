import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Supervisor } from './backends';
import { checkRole, loadModelConfigDir, type NodeConfig } from './config';
import type { CliRef } from './engines';
import { buildApp } from './http';
import { cliRef, uiDir as defaultUiDir } from './paths';
import { ModelRegistry } from './registry';
import { RequestExecutor, RouterMetrics } from './serve';
import { AnalyticsStore, ModelHashCache, openStore, type Db } from './store';
import { ROUTER_VERSION } from './version';

export interface NodeOptions {
  version?: string;
  cli?: CliRef;
  /** Folder of the built UI, served at `/`; default out/renderer of this project. */
  uiDir?: string;
  logLevel?: string;
}

export interface RouterNode {
  url: string;
  consoleToken: string;
  config: NodeConfig;
  app: FastifyInstance;
  registry: ModelRegistry;
  supervisor: Supervisor;
  analytics: AnalyticsStore;
  db: Db;
  close(): Promise<void>;
}

/** Wires one router node from its config and starts listening. The only place that knows every module. */
export async function createNode(config: NodeConfig, options: NodeOptions = {}): Promise<RouterNode> {
  checkRole(config);
  const version = options.version ?? ROUTER_VERSION;
  const nodeId = config.cluster.node_id;
  const db = openStore(config.cluster.store_dir);
  const analytics = new AnalyticsStore(db);
  const registry = new ModelRegistry(loadModelConfigDir(config.models.config_dir));

  let supervisor: Supervisor | undefined;
  const metrics = new RouterMetrics(() => supervisor, () => registry);
  supervisor = new Supervisor(
    registry.all().map((r) => ({ localId: r.localId, publicId: r.publicId, config: r.config })),
    {
      mode: config.backend.mode,
      cli: options.cli ?? cliRef(),
      maxRestarts: config.backend.max_restarts,
      restartCooldownMs: config.backend.restart_cooldown,
      onLoad: (e) => {
        metrics.load(e);
        analytics.recordLoad({ finishedAt: Date.now(), nodeId, model: e.publicId, localId: e.localId, backend: e.backend, lane: e.lane, durationMs: e.durationMs, success: e.success, displacedLocalId: e.displaced, error: e.error });
      },
    },
  );
  const executor = new RequestExecutor({
    nodeId,
    registry,
    supervisor,
    requestTimeoutMs: config.cluster.request_timeout,
    onFinished: (row) => {
      metrics.request(row);
      analytics.recordRequest(row);
    },
  });
  const consoleToken = config.console.token || randomBytes(18).toString('base64url');
  const app = await buildApp(
    {
      nodeId, role: config.cluster.role, version, startedAt: new Date(), executor, registry, supervisor, metrics, consoleToken,
      bodyLimit: config.server.body_limit, uploadLimit: config.server.upload_limit, uiDir: options.uiDir ?? defaultUiDir(),
    },
    { logLevel: options.logLevel },
  );
  await registry.computeHashes(new ModelHashCache(db), (rec, err) => app.log.warn({ model: rec.localId }, `cannot hash weights ${rec.config.model}: ${err.message}`));

  const address = await app.listen({ host: config.server.host, port: config.server.port });
  const url = address.replace('[::1]', '127.0.0.1');

  if (config.models.startup_model) {
    const rec = registry.resolve(config.models.startup_model)[0];
    if (!rec) app.log.error(`models.startup_model '${config.models.startup_model}' is not a configured model`);
    else supervisor.preload(rec.localId).catch((err: Error) => app.log.error({ model: rec.localId }, `startup model failed to load: ${err.message}`));
  }

  let closing: Promise<void> | undefined;
  return {
    url, consoleToken, config, app, registry, supervisor, analytics, db,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await supervisor!.close();
        db.close();
      })()),
  };
}
