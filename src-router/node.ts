import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Supervisor } from './backends';
import { ActiveRequests } from './cluster/active-requests';
import { ActivityTracker } from './cluster/activity';
import { AssetService, fileRootsFromConfig } from './cluster/assets';
import { gatherClusterLanes } from './cluster/lane-gather';
import { localRecords, localSnapshot } from './cluster/local-snapshot';
import { Membership } from './cluster/membership';
import { NodeClient, normalizeUrl } from './cluster/node-client';
import { ClusterDirectory } from './cluster/profiles/cluster-directory';
import { ProfileStore } from './cluster/profiles/profile-store';
import type { TokenSealer } from './cluster/profiles/token-sealing';
import { Registrar } from './cluster/registrar';
import { ReplayRunner } from './cluster/replay-runner';
import { runtimeStatus } from './cluster/runtime-status';
import { SettingsPuller } from './cluster/settings-pull';
import { SttScheduler } from './cluster/stt-scheduler';
import { ownTimelineRows, type TimelineQuery } from './cluster/timeline-gather';
import {
  ConfigError,
  checkRole,
  clientApiKeys,
  MIN_CONSOLE_TOKEN_LENGTH,
  type NodeConfig,
  resolveWriteGates,
} from './config';
import { ModelConfigReadCache } from './config/model-config-files';
import { ModelFileRoots } from './config/model-file-roots';
import { type MasterSettings, RouterError } from './contract';
import type { CliRef } from './engines';
import { GgufHeaders } from './engines/gguf-headers';
import { buildApp, ConsoleCodes } from './http';
import type { SlaveSync } from './http/settings-nudge';
import type { SettingsHost } from './http/settings-routes';
import { createKeySpace, type KeySpace } from './kv';
import { refreshLinkWeights } from './lending/links';
import { replaySettingsOf } from './lending/replay';
import type { ModelRef } from './lending/types';
import { createGuardianWiring, type GuardianWiring } from './node-guardians';
import { createLendingWiring, type LendingWiring } from './node-lending';
import { ModelConfigFolder, readModelConfigsAtStart } from './node-model-configs';
import { createRoutingWiring } from './node-routing';
import { runtimeKeyFor, startRuntimePublishing } from './node-runtime';
import { cliRef, uiDir as defaultUiDir } from './paths';
import { ClusterCatalog, ModelRegistry } from './registry';
import { staticRouteTable } from './routing';
import { type RuntimePublisher, readRuntimeHealth } from './runtime';
import { RequestExecutor, RouterMetrics, TargetResolver } from './serve';
import { QueueLimit } from './serve/queue-limit';
import {
  AnalyticsStore,
  BenchStore,
  ClusterStore,
  type Db,
  DecisionLogWriter,
  type DecisionQuery,
  ModelHashCache,
  openLockedStore,
  queryDecisions,
} from './store';
import { ROUTER_VERSION } from './version';

export interface NodeOptions {
  version?: string;
  cli?: CliRef;
  /** Folder of the built UI, served at `/`; default out/renderer of this project. */
  uiDir?: string;
  logLevel?: string;
  /** The node config file the config was read from: its folder is never an asset source or target. */
  configFile?: string;
  /** How remote clusters' tokens are sealed at rest (the desktop app: the OS keychain); default: as given, in an owner-only store. */
  tokenSealer?: TokenSealer;
  /** The console token when the config sets none (a restarted node keeps the one it had); default: a random one. */
  consoleToken?: string;
  /** One-time codes for the console token (a host keeps one store across restarts); default: a store of this node's. */
  consoleCodes?: ConsoleCodes;
  /** The Settings screen: the config file it edits and how the node restarts on it (`NodeHost`). */
  settings?: SettingsHost;
  /** Environment read for the write gates (ROUTE-8); default process.env. */
  env?: Record<string, string | undefined>;
}

export interface RouterNode {
  url: string;
  consoleToken: string;
  /** Issues the one-time codes a browser exchanges for the console token (`routerdesk serve`'s link). */
  consoleCodes: ConsoleCodes;
  config: NodeConfig;
  app: FastifyInstance;
  registry: ModelRegistry;
  catalog: ClusterCatalog;
  supervisor: Supervisor;
  analytics: AnalyticsStore;
  membership?: Membership;
  keyspace: KeySpace;
  db: Db;
  close(): Promise<void>;
}

/** Wires one router node from its config and starts listening. The only place that knows every module. */
export async function createNode(config: NodeConfig, options: NodeOptions = {}): Promise<RouterNode> {
  checkRole(config);
  // ROUTE-8: INFERENCE_DEPLOY_ENABLED / INFERENCE_ADMIN_EMAILS win over console.routing_writes_enabled / console.operators.
  const gates = resolveWriteGates(config.console, options.env ?? process.env);
  const version = options.version ?? ROUTER_VERSION;
  const nodeId = config.cluster.node_id;
  const role = config.cluster.role;
  const startedAt = new Date();
  // One process per store: router.lock; analytics batched off the request path, pruned like the decision log.
  const { db, lock: storeLock } = openLockedStore(config.cluster.store_dir);
  // What a start that fails half-way has taken is given back (store lock, ports, engines, timers, connections), so
  // the caller can start again on the same store and port.
  const held: { analytics?: AnalyticsStore; keyspace?: KeySpace; app?: FastifyInstance } = {};
  let supervisor: Supervisor | undefined;
  let routing: ReturnType<typeof createRoutingWiring> | undefined;
  let decisionsWriter: DecisionLogWriter | undefined;
  // Replays and the rows members answer run in worker threads that read the store themselves: queued rows go first.
  const flushRows = () => (held.analytics?.flush(), decisionsWriter?.flush());
  const replayRunner = new ReplayRunner({ beforeStart: flushRows });
  const replaySources = new ReplayRunner({ beforeStart: flushRows, what: "a read of this node's replay rows" });
  let membership: Membership | undefined;
  let lendingWiring: LendingWiring | undefined;
  let registrar: Registrar | undefined;
  let puller: SettingsPuller | undefined;
  let publisher: RuntimePublisher | undefined;
  let modelFolder: ModelConfigFolder | undefined;
  let closed = false;
  const teardown = async () => {
    closed = true;
    const steps: (() => unknown)[] = [
      () => modelFolder?.stop(),
      () => membership?.stop(),
      () => registrar?.stop(),
      () => puller?.stop(),
      () => routing?.stop(),
      () => lendingWiring?.stop(),
      () => publisher?.stop(),
      () => replayRunner.stop(),
      () => replaySources.stop(),
      () => held.app?.close(),
      () => supervisor?.close(),
      () => held.keyspace?.close(),
      () => held.analytics?.close(),
      () => decisionsWriter?.close(),
      () => db.close(),
    ];
    try {
      for (const step of steps) await step();
    } finally {
      storeLock.release();
    }
  };
  try {
    const analytics = (held.analytics = new AnalyticsStore(db, nodeId, {
      retentionMs: config.cluster.offload_decisions_retention,
      onError: (err) => logRef.warn(`analytics write failed: ${err.message}`),
    }));
    const clusterStore = new ClusterStore(db);
    // An invalid model config is skipped (listed with its error, logged, a self-test warning), not fatal.
    const modelReadCache = new ModelConfigReadCache();
    const modelsAtStart = await readModelConfigsAtStart(config.models.config_dir, config.backend.mode, modelReadCache);
    const registry = new ModelRegistry(modelsAtStart.files);
    const catalog = new ClusterCatalog(clusterStore);
    const activity = new ActivityTracker();
    // UI-2: every request this node runs, listed on the Nodes page (enrolled models' from their router queues).
    const activeRequests = new ActiveRequests({
      laneOf: (id) => supervisor!.adapter(id).lane,
      enrolled: (id) => lendingWiring?.lending.enrolled(id) ?? false,
      publicIdOf: (id) => registry.byLocalId(id)?.publicId,
    });
    const client = new NodeClient(config.cluster.token);
    /** The Models screen's lane state of each member: a short bound, the console waits for it. */
    const laneClient = new NodeClient(config.cluster.token, 3_000);
    let logRef: { warn(msg: string): void } = { warn: (m) => console.warn(m) };
    // A Redis outage is logged once each way; the blob is republished as soon as Redis is back (RT-1).
    // A value over the keyspace's bound is never read; which key and why is logged once per key and size.
    const onValueTooLarge = (err: Error) => logRef.warn(`keyspace value refused: ${err.message}`);
    const keyspace = (held.keyspace = createKeySpace(config.redis.url, {
      redis: {
        onReachableChange: (ok: boolean, detail: string) => {
          logRef.warn(`redis ${ok ? 'reachable again' : 'unreachable'}: ${detail}`);
          if (ok) void publisher?.publishNow().catch(() => {});
        },
        onValueTooLarge,
      },
      embedded: { onValueTooLarge },
    }));
    const cli = options.cli ?? cliRef();

    const metrics = new RouterMetrics(
      () => supervisor,
      () => registry,
    );
    supervisor = new Supervisor(
      registry.all().map((r) => ({ localId: r.localId, publicId: r.publicId, config: r.config })),
      {
        mode: config.backend.mode,
        cli,
        maxRestarts: config.backend.max_restarts,
        restartCooldownMs: config.backend.restart_cooldown,
        engineNice: config.backend.engine_nice,
        // Ready engines are health-checked; engines' PIDs are recorded in the store (leftovers stopped at start-up).
        healthIntervalMs: config.backend.health_interval,
        healthTimeoutMs: config.backend.health_timeout,
        storeDir: config.cluster.store_dir,
        log: { warn: (m) => logRef.warn(m) },
        onLoad: (e) => {
          metrics.load(e);
          routing?.syncTargets();
          analytics.recordLoad({
            finishedAt: Date.now(),
            nodeId,
            model: e.publicId,
            localId: e.localId,
            backend: e.backend,
            lane: e.lane,
            durationMs: e.durationMs,
            success: e.success,
            displacedLocalId: e.displaced,
            error: e.error,
          });
          lendingWiring?.lending.noteRecorded(e.localId);
        },
      },
    );
    const sup = supervisor;
    let guardianWiring: GuardianWiring | undefined;
    const refreshCatalog = () => {
      catalog.update([
        { nodeId, local: true, healthy: true, url: null, records: localRecords(registry, sup) },
        ...(membership?.nodeRecords() ?? []),
      ]);
      routing?.syncTargets();
      if (lendingWiring && role === 'master') refreshLinkWeights(lendingWiring.links, catalog.all());
      lendingWiring?.pushLinks();
      lendingWiring?.membersChanged();
      guardianWiring?.push();
    };

    let stt: SttScheduler | undefined;
    const statusNow = () => runtimeStatus(nodeId, registry, sup, activity, stt?.reservationsOn(nodeId) ?? 0);
    const snapshotNow = () => ({
      ...localSnapshot(config, version, startedAt, registry, sup),
      linksVersion: lendingWiring?.lending.linksVersion ?? 0,
      guardiansVersion: guardianWiring?.version() ?? 0,
    });

    // Assets and split recipes (ASSET-1..4): file roots, hash index (warmed in the background), bindings, recipes.
    // The node relationship is the configured one: slave_urls on a master, master_url on a slave (ASSET-3).
    const masterUrl = config.cluster.master_url;
    const assets = new AssetService({
      roots: fileRootsFromConfig(config, {}, options.configFile ? { configFile: options.configFile } : {}),
      hashCache: new ModelHashCache(db),
      db,
      token: config.cluster.token,
      maxBytes: config.models.asset_max_bytes,
      transferTimeoutMs: config.cluster.request_timeout,
      relatedUrls: [...config.cluster.slave_urls, ...(masterUrl ? [masterUrl] : [])],
      nodeUrl: async (id) =>
        membership?.urlOf(id) ??
        (masterUrl && (await client.snapshot(normalizeUrl(masterUrl)).catch(() => undefined))?.nodeId === id
          ? masterUrl
          : undefined),
      localNodeId: nodeId,
      preloadLocal: (localId) => sup.preload(localId),
      loadTimeoutMs: config.backend.load_timeout + 30_000,
    });

    // Static routes as every view shows them (passwords hidden); their credentials go upstream as Basic authorization.
    const statics = staticRouteTable(config.routing.static_routes);
    const resolver = new TargetResolver({
      nodeId,
      registry,
      catalog,
      supervisor: sup,
      sttSelectors: new Set(['', config.models.stt_selector]),
      selectStt: (exclude) => stt!.select(exclude),
      staticRoutes: statics.shown,
      choose: (group, candidates, body) => routing?.choose(group, candidates, body),
      recipes: assets.recipes,
    });
    const executor = new RequestExecutor({
      nodeId,
      resolver,
      supervisor: sup,
      clusterToken: config.cluster.token,
      requestTimeoutMs: config.cluster.request_timeout,
      staticCall: statics.call,
      onStart: (target, borrowed, input, requestId) => {
        const endOwn = target.kind === 'local' && !borrowed ? activity.begin() : undefined;
        const endPod = routing?.begin(target);
        const endActive = activeRequests.begin(target, input, requestId);
        return () => {
          endOwn?.();
          endPod?.();
          endActive();
        };
      },
      onTurn: (target, answered) => routing?.turn(target, answered),
      queueLimit: new QueueLimit(config.server.max_queue, (id) => {
        const c = registry.byLocalId(id)?.config;
        return {
          maxQueue: c?.max_queue ?? null,
          parallel: Math.max(1, c?.parallel ?? c?.vllm?.settings.max_number_sequences ?? 1),
        };
      }),
      onFinished: (row) => {
        metrics.request(row);
        analytics.recordRequest(row);
        lendingWiring?.lending.noteRecorded(row.localId);
      },
    });
    let selfUrl = '';
    const consoleToken = config.console.token || options.consoleToken || randomBytes(18).toString('base64url');
    if (consoleToken.length < MIN_CONSOLE_TOKEN_LENGTH)
      throw new ConfigError(
        `the console token handed to the node needs at least ${MIN_CONSOLE_TOKEN_LENGTH} characters`,
      );
    const consoleCodes = options.consoleCodes ?? new ConsoleCodes();
    const runtimeKey = runtimeKeyFor(config);
    const lendingHttp = {
      lending: undefined as unknown as LendingWiring['lending'],
      links: undefined as unknown as LendingWiring['links'],
      linksChanged: () => lendingWiring!.linksChanged(),
      coordinator: undefined as LendingWiring['coordinator'],
      masterLease: (owner: ModelRef) => lendingWiring!.masterLease(owner),
    };
    const deps = {
      nodeId,
      role,
      version,
      startedAt,
      executor,
      registry,
      supervisor: sup,
      metrics,
      consoleToken,
      consoleCodes,
      catalog,
      clusterToken: role === 'standalone' ? '' : config.cluster.token,
      snapshot: snapshotNow,
      runtimeStatus: statusNow,
      bodyLimit: config.server.body_limit,
      writeTimeoutMs: config.server.write_timeout,
      guards: {
        allowedHosts: config.server.allowed_hosts,
        corsOrigins: config.server.cors_origins,
        publicUrl: config.cluster.public_url ?? null,
        apiKeys: clientApiKeys(config),
      },
      uploadLimit: config.server.upload_limit,
      uiDir: options.uiDir ?? defaultUiDir(),
      operators: gates.operators.map((o) => o.token),
      operatorEmails: gates.operators,
      routingWritesEnabled: gates.routingWritesEnabled,
      writeGate: gates.gate,
      routing: undefined as unknown as ReturnType<typeof createRoutingWiring>,
      lendingHttp,
      benchRuns: new BenchStore(db),
      activeRequests: () => activeRequests.view(lendingWiring?.lending.activeItems() ?? []),
      guardians: undefined as unknown as GuardianWiring,
      masterSettings: (receiver: string): MasterSettings => ({
        master: nodeId,
        links: lendingWiring!.linksNow(),
        guardians: guardianWiring!.settingsFor(receiver),
        members: [
          { node_id: nodeId, url: config.cluster.public_url ?? null },
          ...(membership?.known() ?? []).map((m) => ({ node_id: m.nodeId, url: m.url })),
        ],
      }),
      slaveSync: undefined as SlaveSync | undefined,
      lendingSettings: Object.fromEntries(
        Object.entries(config.cluster).filter(([k]) => k.startsWith('scheduling_') || k.startsWith('offload_')),
      ),
      decisions: { query: (q: DecisionQuery) => queryDecisions(db, q), flush: () => decisionsWriter?.flush() },
      timeline: (q: TimelineQuery) => ownTimelineRows(nodeId, analytics, q),
      replay: {
        settings: replaySettingsOf(config.cluster),
        storeDir: config.cluster.store_dir,
        runner: replayRunner,
        sources: replaySources,
      },
      staticRouteIds: Object.keys(statics.shown),
      staticRoutes: statics.shown,
      assets,
      settings: options.settings ?? null,
      modelFileRoots: ModelFileRoots.fromConfig(config),
      ggufHeaders: new GgufHeaders({
        onError: (path, message) => logRef.warn(`GGUF header of ${path} not read: ${message}`),
      }),
      modelConfigs: undefined as unknown as ModelConfigFolder,
      selfUrl: () => selfUrl,
      clusters: new ClusterDirectory(new ProfileStore(db, options.tokenSealer), {
        remoteTimeoutMs: config.console.remote_timeout,
      }),
      runtimeHealth: () => readRuntimeHealth(keyspace, runtimeKey),
      clusterLanes: () =>
        gatherClusterLanes({
          localNodeId: nodeId,
          local: statusNow,
          remote: (url) => laneClient.runtimeStatus(url),
          members: () => (membership?.views() ?? []).flatMap((v) => (v.url ? [{ nodeId: v.nodeId, url: v.url }] : [])),
        }),
      remoteRuntimeHealth: async (id: string) => {
        const url = membership?.urlOf(id);
        if (!url) throw new RouterError(404, 'node_not_found', `no node '${id}' in this cluster`);
        return client.runtimeHealth(url);
      },
    };
    const app = (held.app = await buildApp(deps, {
      logLevel: options.logLevel,
      keepAliveTimeoutMs: config.server.keep_alive_timeout,
      requestTimeoutMs: config.server.request_timeout,
      headersTimeoutMs: config.server.headers_timeout,
    }));
    logRef = { warn: (m) => app.log.warn(m) };
    routing = createRoutingWiring({ config, statics, keyspace, catalog, supervisor: sup, metrics, log: app.log });
    deps.routing = routing;
    const decisions = (decisionsWriter = new DecisionLogWriter(db, {
      nodeId,
      routerVersion: version,
      retentionMs: config.cluster.offload_decisions_retention,
      observe: (row) => metrics.decision(row),
      onError: (err) => app.log.error(`decision log write failed: ${err.message}`),
    }));
    await registry.computeHashes(new ModelHashCache(db), (rec, err) =>
      app.log.warn({ model: rec.localId }, `cannot hash weights ${rec.config.model}: ${err.message}`),
    );
    // After the model hashes, so weights next to their YAML are hashed once (the index reuses the cache).
    void assets.warm().catch((err: Error) => app.log.warn(`asset index: ${err.message}`));

    if (role === 'master') {
      membership = new Membership({
        localNodeId: nodeId,
        slaveUrls: config.cluster.slave_urls,
        healthIntervalMs: config.cluster.health_interval,
        client,
        store: clusterStore,
        log: app.log,
        onChange: refreshCatalog,
      });
      Object.assign(deps, { membership });
    }
    lendingWiring = createLendingWiring({
      config,
      db,
      registry,
      supervisor: sup,
      analytics,
      activity,
      decisions,
      executor,
      log: app.log,
      membership,
    });
    executor.deps.lending = lendingWiring.lending;
    executor.deps.decisions = decisions;
    // Guardian settings (GUARD-1): the request path asks the directory; the site API and pushes use the wiring.
    guardianWiring = createGuardianWiring({ config, db, catalog, log: app.log, membership });
    executor.deps.guardians = guardianWiring.directory;
    deps.guardians = guardianWiring;
    const wired = lendingWiring;
    metrics.watchLending({
      nodeId,
      role,
      version,
      lending: () => wired.lending,
      coordinator: () => wired.coordinator,
      decisionLog: () => decisions,
    });
    lendingHttp.lending = lendingWiring.lending;
    lendingHttp.links = lendingWiring.links;
    lendingHttp.coordinator = lendingWiring.coordinator;
    lendingWiring.start();
    // The models folder is taken in while the node runs: the catalog, links and (on a slave) the master follow.
    modelFolder = new ModelConfigFolder({
      dir: config.models.config_dir,
      registry,
      supervisor: sup,
      hashCache: new ModelHashCache(db),
      mode: config.backend.mode,
      log: app.log,
      initial: modelsAtStart.read,
      cache: modelReadCache,
      changed: () => {
        refreshCatalog();
        const lending = lendingWiring?.lending;
        lending?.applyLinks(lending.linksVersion, lending.appliedLinks());
        void registrar?.registerNow();
      },
    });
    deps.modelConfigs = modelFolder;
    stt = new SttScheduler({
      localNodeId: nodeId,
      catalog,
      client,
      localStatus: statusNow,
      remotes: () => membership?.statusCapable() ?? [],
      log: app.log,
    });
    refreshCatalog();

    const address = await app.listen({ host: config.server.host, port: config.server.port });
    modelFolder.start();
    const url = address.replace('[::1]', '127.0.0.1');
    selfUrl = url;
    routing.start();
    let closing: Promise<void> | undefined;
    void startRuntimePublishing({
      config,
      registry,
      refusedModelConfigs: modelsAtStart.read.filter((r) => r.error),
      supervisor: sup,
      keyspace,
      cli,
      port: new URL(url).port ? Number(new URL(url).port) : config.server.port,
      version,
      startedAt,
      log: app.log,
    })
      .then((r) => {
        if (closed) void r.publisher.stop();
        else publisher = r.publisher;
      })
      .catch((err: Error) => app.log.error(`runtime publishing did not start: ${err.message}`));

    await membership?.start();
    if (role === 'slave') {
      registrar = new Registrar({
        masterUrl: config.cluster.master_url!,
        syncIntervalMs: config.cluster.sync_interval,
        client,
        snapshot: snapshotNow,
        log: app.log,
        onMasterLost: () => lendingWiring?.lending.masterLost(),
        onMasterBack: () => lendingWiring?.lending.masterBack(),
      });
      registrar.start();
      // Links and guardian settings come from the configured master only: read at start, every sync interval and on
      // each push (which only nudges).
      const reg = registrar;
      const lw = lendingWiring;
      const gw = guardianWiring;
      puller = new SettingsPuller({
        masterUrl: config.cluster.master_url!,
        token: config.cluster.token,
        nodeId,
        intervalMs: config.cluster.sync_interval,
        log: app.log,
        apply: (s) => {
          lw.applyPulled(s.links);
          gw.applyPulled(s.guardians, s.members, s.master);
        },
      });
      const p = puller;
      deps.slaveSync = { masterId: () => reg.master(), pull: () => p.pull() };
      puller.start();
    }

    if (config.models.startup_model) {
      const rec = registry.resolve(config.models.startup_model)[0];
      if (!rec) app.log.error(`models.startup_model '${config.models.startup_model}' is not a configured model`);
      else
        sup
          .preload(rec.localId)
          .catch((err: Error) => app.log.error({ model: rec.localId }, `startup model failed to load: ${err.message}`));
    }

    return {
      url,
      consoleToken,
      consoleCodes,
      config,
      app,
      registry,
      catalog,
      supervisor: sup,
      analytics,
      membership,
      keyspace,
      db,
      close: () => (closing ??= teardown()),
    };
  } catch (err) {
    await teardown().catch(() => undefined);
    throw err;
  }
}
