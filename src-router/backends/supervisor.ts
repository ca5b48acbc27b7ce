import { join } from 'node:path';
import type { ModelConfig } from '../config';
import type { EngineState, Lane } from '../contract';
import { adapterFor, type BackendMode, type CliRef, type EngineAdapter } from '../engines';
import type { ClientGone } from './call-end';
import { resolveEngineCommand } from './engine-binaries';
import { ENGINE_OWN_GROUP, EngineProcess } from './engine-process';
import { ENGINE_RECORDS_FILE, EngineRecords, type EngineRecordsLog } from './engine-records';
import { EngineError, modelUnavailable } from './errors';
import { freePort } from './free-port';
import { type EngineLease, LaneRuntime } from './lane-runtime';

export interface SupervisedModel {
  localId: string;
  publicId: string;
  config: ModelConfig;
}

export interface LoadEvent {
  localId: string;
  publicId: string;
  backend: string;
  lane: Lane;
  durationMs: number;
  success: boolean;
  displaced: string | null;
  error: string | null;
}

export interface SupervisorOptions {
  mode: BackendMode;
  host?: string;
  cli: CliRef;
  maxRestarts: number;
  restartCooldownMs: number;
  /** backend.engine_nice */
  engineNice?: number;
  /** backend.health_interval: how often a ready engine is health-checked (0: never). */
  healthIntervalMs?: number;
  /** backend.health_timeout */
  healthTimeoutMs?: number;
  /**
   * The node's store folder: the engines' PIDs are recorded in `engines.json` there, and engines a previous run on
   * the same store left running are stopped before any engine starts. Absent: nothing is recorded.
   */
  storeDir?: string;
  log?: EngineRecordsLog;
  onLoad?(e: LoadEvent): void;
  now?(): number;
}

/**
 * Supervises the engine processes of one node: one runtime per lane, lazy start, switch, crash detection, bounded
 * restart, health checks of ready engines (a hung one is killed and restarted), and PID records of the engines it
 * runs so that the next start on the same store stops those a killed node left behind.
 */
export class Supervisor {
  private readonly models = new Map<string, SupervisedModel & { adapter: EngineAdapter; removing: boolean }>();
  /** The config each engine process was started from: an engine of a replaced config is switched when idle. */
  private readonly launched = new WeakMap<EngineProcess, ModelConfig>();
  private readonly now: () => number;
  private readonly lanes = new Map<Lane, LaneRuntime>();
  private readonly host: string;
  private closed = false;
  private readonly records?: EngineRecords;
  /** Leftovers of a previous run stopped: engines start only after this. */
  private readonly reaped: Promise<void>;
  /** Idle-unload times set by requests (Ollama's keep_alive), in force until the model unloads; null: never. */
  private readonly keepAlive = new Map<string, number | null>();

  constructor(
    models: SupervisedModel[],
    private readonly opts: SupervisorOptions,
  ) {
    this.host = opts.host ?? '127.0.0.1';
    this.now = opts.now ?? Date.now;
    if (opts.storeDir) this.records = new EngineRecords(join(opts.storeDir, ENGINE_RECORDS_FILE), opts.log);
    const log = opts.log ?? { warn: (m: string) => console.warn(m) };
    this.reaped = this.records
      ? this.records
          .reapLeftovers()
          .catch((err: Error) => log.warn(`stopping engines left by a previous run: ${err.message}`))
      : Promise.resolve();
    for (const m of models) this.addModel(m);
  }

  /** The lane runtime of `lane`, made on first use. */
  private laneRuntime(lane: Lane): LaneRuntime {
    let runtime = this.lanes.get(lane);
    if (runtime) return runtime;
    const opts = this.opts;
    runtime = new LaneRuntime(lane, {
      createProcess: (id) => this.createProcess(id),
      publicIdOf: (id) => this.models.get(id)?.publicId ?? id,
      onLoad: (l) => {
        const model = this.models.get(l.localId);
        opts.onLoad?.({
          ...l,
          publicId: model?.publicId ?? l.localId,
          backend: model?.config.backend ?? 'unknown',
          lane,
        });
      },
      maxRestarts: opts.maxRestarts,
      restartCooldownMs: opts.restartCooldownMs,
      idleUnloadMs: (id) => (this.models.has(id) ? this.idleUnloadMs(id) : null),
      // A request's keep_alive lasts until the model unloads; the next load starts from its config's ttl.
      onIdleUnload: (id) => this.keepAlive.delete(id),
      stale: (id, proc) => {
        const m = this.models.get(id);
        return !m || m.removing || m.adapter.lane !== lane || this.launched.get(proc) !== m.config;
      },
      configured: (id) => {
        const m = this.models.get(id);
        return !!m && !m.removing && m.adapter.lane === lane;
      },
      now: this.now,
    });
    this.lanes.set(lane, runtime);
    return runtime;
  }

  /** Adds a model (at start, or a config taken in while the node runs); it loads on its first request. */
  addModel(m: SupervisedModel): void {
    const adapter = adapterFor(m.config, this.opts.mode);
    this.models.set(m.localId, { ...m, adapter, removing: false });
    this.laneRuntime(adapter.lane);
  }

  /**
   * Replaces the config of a model. A loaded engine keeps serving what it runs and is switched to the new config
   * once its lane is idle, as a model switch is; requests arriving meanwhile wait for the new engine.
   */
  updateModel(m: SupervisedModel): void {
    const old = this.get(m.localId);
    const adapter = adapterFor(m.config, this.opts.mode);
    this.models.set(m.localId, { ...m, adapter, removing: false });
    this.keepAlive.delete(m.localId);
    const lane = this.laneRuntime(adapter.lane);
    if (old.adapter.lane !== adapter.lane) {
      // Moved to another lane: whoever waits on the old one asks again.
      this.lanes
        .get(old.adapter.lane)!
        .configChanged(m.localId, modelUnavailable(m.publicId, 'its config changed lanes; send the request again'));
    }
    lane.configChanged(m.localId);
  }

  /**
   * Removes a model: requests waiting for its engine are refused (503 `model_unavailable`), running ones finish, then
   * its engine stops. Resolves once nothing of it runs; new requests must no longer be routed to it (the registry).
   */
  async removeModel(localId: string): Promise<void> {
    const m = this.models.get(localId);
    if (!m) return;
    m.removing = true;
    this.keepAlive.delete(localId);
    const lane = this.lanes.get(m.adapter.lane)!;
    lane.configChanged(localId, modelUnavailable(m.publicId, 'it was removed from this node'));
    await lane.whenGone(localId);
    if (this.models.get(localId) === m) this.models.delete(localId);
  }

  /** Whether `localId` is configured here (removed models are not). */
  has(localId: string): boolean {
    const m = this.models.get(localId);
    return !!m && !m.removing;
  }

  adapter(localId: string): EngineAdapter {
    return this.get(localId).adapter;
  }

  laneOf(localId: string): LaneRuntime {
    return this.lanes.get(this.get(localId).adapter.lane)!;
  }

  private get(localId: string) {
    const m = this.models.get(localId);
    if (!m) throw new Error(`unknown local model ${localId}`);
    return m;
  }

  private async createProcess(localId: string): Promise<EngineProcess> {
    await this.reaped;
    const m = this.get(localId);
    const port = await freePort(this.host);
    const launch = m.adapter.launch(m.config, {
      host: this.host,
      port,
      localId,
      cli: this.opts.cli,
      resolveCommand: resolveEngineCommand,
    });
    const proc = new EngineProcess({
      localId,
      host: this.host,
      port,
      launch,
      healthPath: m.adapter.healthPath,
      loadTimeoutMs: m.config.load_timeout,
      nice: this.opts.engineNice,
      healthIntervalMs: this.opts.healthIntervalMs,
      healthTimeoutMs: this.opts.healthTimeoutMs,
      // sd-server and whisper-server may not answer while a job runs: checked only while idle.
      healthWhileBusy: m.adapter.shape !== 'sd-server' && m.adapter.shape !== 'whisper-server',
      busy: () => this.laneOf(localId).inflight > 0,
    });
    this.launched.set(proc, m.config);
    const records = this.records;
    if (records) {
      // Recorded while it runs, so that a node killed outright leaves a trace the next start can act on.
      proc.on('spawned', (pid: number, argv: string[]) => {
        records.add(pid, localId, argv, ENGINE_OWN_GROUP);
        proc.once('exit', () => records.remove(pid));
      });
    }
    return proc;
  }

  /** Waits for the lane of `localId` with it loaded; `client` gone meanwhile: rejected (499). */
  acquire(localId: string, client?: ClientGone): Promise<EngineLease> {
    if (this.closed) return Promise.reject(new EngineError('node is shutting down', 503, 'shutting_down'));
    const m = this.models.get(localId);
    if (!m || m.removing)
      return Promise.reject(modelUnavailable(m?.publicId ?? localId, 'it was removed from this node'));
    return this.laneOf(localId).acquire(localId, client);
  }

  /** Loads a model now (the startup model), without holding it. */
  async preload(localId: string): Promise<void> {
    const lease = await this.acquire(localId);
    // No job was sent to the engine: not a finish, or a job running meanwhile would be measured from here (PRICE-2).
    lease.release('unused');
  }

  /** How long the engine of `localId` stays loaded while idle: a request's keep_alive, else the config's ttl; null: no limit. */
  idleUnloadMs(localId: string): number | null {
    const set = this.keepAlive.get(localId);
    return set !== undefined ? set : (this.get(localId).config.ttl ?? null);
  }

  /**
   * Sets the idle-unload time of `localId` (a request's keep_alive; null: never, undefined: back to the config's ttl).
   * It applies from the lane's next idle moment, so a request that sets it is never cut short by it; `now` re-arms an
   * idle engine at once (an explicit load or unload call).
   */
  setIdleUnload(localId: string, ms: number | null | undefined, opts: { now?: boolean } = {}): void {
    this.get(localId);
    if (ms === undefined) this.keepAlive.delete(localId);
    else this.keepAlive.set(localId, ms);
    if (opts.now) this.laneOf(localId).idleChanged();
  }

  /** When the idle engine of `localId` will be stopped (epoch ms), or null. */
  unloadsAt(localId: string): number | null {
    return this.laneOf(localId).unloadsAt(localId);
  }

  /** The last successful load of `localId`: when it ended (epoch ms) and how long it took. */
  lastLoad(localId: string): { at: number; durationMs: number } | undefined {
    return this.laneOf(localId).lastLoadOf(localId);
  }

  state(localId: string): EngineState {
    return this.laneOf(localId).stateOf(localId);
  }

  available(localId: string): boolean {
    return this.laneOf(localId).availableFor(localId);
  }

  /** Per model: loaded, loading, active (at the engine) and queued (waiting for it). */
  modelLoad(localId: string) {
    const lane = this.laneOf(localId);
    const loadedHere = lane.current?.localId === localId;
    return {
      loaded: loadedHere && lane.current!.proc.state === 'ready',
      loading: lane.switching === localId,
      active: loadedHere ? lane.inflight : 0,
      queued: lane.queuedFor(localId),
    };
  }

  lastError(localId: string): string | null {
    return this.laneOf(localId).lastErrorOf(localId);
  }

  /** Per lane: what is loaded, its state, in-flight and waiting counts. */
  laneStatus() {
    return [...this.lanes.values()].map((l) => ({
      lane: l.lane,
      loaded: l.current?.localId ?? null,
      state: l.current ? l.current.proc.state : l.switching ? 'starting' : 'stopped',
      pid: l.current?.proc.pid ?? null,
      port: l.current?.proc.opts.port ?? null,
      inflight: l.inflight,
      queued: l.queued,
    }));
  }

  logs(localId: string, n = 100) {
    const cur = this.laneOf(localId).current;
    return cur?.localId === localId ? cur.proc.logs.tail(n) : [];
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reaped;
    await Promise.all([...this.lanes.values()].map((l) => l.stop()));
  }
}
