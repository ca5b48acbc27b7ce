import type { KeySpace } from '../kv';
import {
  type GpuStats,
  RUNTIME_BLOB_KEY,
  type RuntimeBlob,
  runtimeBlobSchema,
  type SelfTestResult,
  type ServingConfig,
} from './blob';
import { compact } from './compact';
import { HostSampler, type HostStats } from './host';

export interface RuntimePublisherOptions {
  keyspace: KeySpace;
  /** Version string published as `version`. */
  version: string;
  /** Engine name published as `engine`; absent when undefined (the console shows `not reported`). */
  engine?: string;
  /** When the process started, epoch ms (or a Date); `uptime` is now − startedAt. */
  startedAt: number | Date;
  /** Boot self-test results, in order. A function lets the boot diagnostics finish after the publisher started. */
  selfTests?: readonly SelfTestResult[] | (() => readonly SelfTestResult[] | undefined);
  /** Serving config of the loaded model, or undefined when nothing is loaded. */
  servingConfig?: () => ServingConfig | undefined;
  /** Number of models the engines hold loaded (memory-mapped); absent when not known. */
  mappedModels?: () => number | undefined;
  /** GPU reader (e.g. `readNvidiaGpu`); without one, or when it answers undefined, the blob has no `gpu`. */
  readGpu?: () => Promise<GpuStats | undefined>;
  /** Host reader (default: a HostSampler over `os` and /proc/meminfo). */
  readHost?: () => Promise<HostStats>;
  /** Key to publish at (default `clutchcall:inference:runtime`). */
  key?: string;
  /** Publish period (default 10 s); the blob's TTL is three periods, so a dead publisher's blob disappears. */
  intervalMs?: number;
  /** Wall clock in ms (default `Date.now`), for uptime. */
  now?: () => number;
  /**
   * How often (ms) to look whether the serving config or the mapped-model count changed since the last publish, and
   * republish at once when they did, so a model load shows without waiting a whole period. Absent: only periodic.
   */
  changeCheckMs?: number;
  /** Called when a timed publish fails (the keyspace is down); the next period tries again. */
  onError?: (err: unknown) => void;
}

/** The pieces a blob is built from, each already read; absent pieces stay absent. */
export interface BlobParts {
  version?: string;
  engine?: string;
  uptimeMs?: number;
  host?: HostStats;
  gpu?: GpuStats;
  selfTests?: readonly SelfTestResult[];
  servingConfig?: ServingConfig;
  mappedModels?: number;
}

/** Assembles the blob (pure). CPU tensor-parallel width and max context repeat the serving config, as the seed says. */
export function buildRuntimeBlob(parts: BlobParts): RuntimeBlob {
  const serving = parts.servingConfig ? compact<ServingConfig>({ ...parts.servingConfig }) : undefined;
  const host = parts.host ?? {};
  return (
    compact<RuntimeBlob>({
      host: host.host,
      version: parts.version,
      uptime: parts.uptimeMs === undefined ? undefined : Math.max(0, Math.round(parts.uptimeMs)),
      engine: parts.engine,
      gpu: parts.gpu ? compact<GpuStats>({ ...parts.gpu }) : undefined,
      cpu: compact({ ...host.cpu, tensorParallel: serving?.tensorParallel, maxContext: serving?.maxModelLen }),
      memory: compact({ ...host.memory, mappedModels: parts.mappedModels }),
      selfTests: parts.selfTests
        ? parts.selfTests.map((t) => ({ name: t.name, detail: t.detail, ms: t.ms, status: t.status }))
        : undefined,
      servingConfig: serving,
    }) ?? {}
  );
}

/**
 * Publishes this node's runtime blob (RT-1) as JSON at `clutchcall:inference:runtime`: once on `start()`, then
 * every interval (unref'd timer), each write with a TTL of three intervals. Publishes never overlap; a failed
 * timed publish is reported to `onError` and retried next period. `stop()` ends the timer and, with
 * `{ remove: true }`, deletes the blob (a node that stopped publishes nothing).
 */
export class RuntimePublisher {
  readonly key: string;
  readonly intervalMs: number;
  private timer?: NodeJS.Timeout;
  private changeTimer?: NodeJS.Timeout;
  /** What the serving inputs were at the last publish (see changeCheckMs). */
  private publishedInputs?: string;
  private inFlight?: Promise<RuntimeBlob>;
  private readonly readHost: () => Promise<HostStats>;
  private readonly now: () => number;

  constructor(private readonly opts: RuntimePublisherOptions) {
    this.key = opts.key ?? RUNTIME_BLOB_KEY;
    this.intervalMs = opts.intervalMs ?? 10_000;
    if (!(this.intervalMs > 0)) throw new RangeError(`intervalMs must be above 0, got ${this.intervalMs}`);
    this.now = opts.now ?? Date.now;
    if (opts.readHost) this.readHost = opts.readHost;
    else {
      const sampler = new HostSampler();
      this.readHost = () => sampler.sample();
    }
  }

  get ttlMs(): number {
    return this.intervalMs * 3;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Reads every input and builds the blob (validated against the schema). */
  async buildBlob(): Promise<RuntimeBlob> {
    const o = this.opts;
    const startedAt = o.startedAt instanceof Date ? o.startedAt.getTime() : o.startedAt;
    const inputs = this.servingInputs();
    const [host, gpu] = await Promise.all([
      this.readHost().catch(() => undefined),
      o.readGpu ? o.readGpu().catch(() => undefined) : undefined,
    ]);
    const blob = buildRuntimeBlob({
      version: o.version,
      engine: o.engine,
      uptimeMs: this.now() - startedAt,
      host,
      gpu,
      selfTests: typeof o.selfTests === 'function' ? o.selfTests() : o.selfTests,
      servingConfig: inputs.servingConfig,
      mappedModels: inputs.mappedModels,
    });
    this.publishedInputs = JSON.stringify(inputs);
    return runtimeBlobSchema.parse(blob);
  }

  /** Builds and writes the blob now; rejects when the keyspace does (KeySpaceError). Joins a publish in flight. */
  publishNow(): Promise<RuntimeBlob> {
    this.inFlight ??= (async () => {
      try {
        const blob = await this.buildBlob();
        await this.opts.keyspace.set(this.key, JSON.stringify(blob), { ttlMs: this.ttlMs });
        return blob;
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  /** First publish (a failure goes to onError, never thrown), then the periodic timer. Calling it twice is a no-op. */
  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    if (this.opts.changeCheckMs && this.opts.changeCheckMs > 0) {
      this.changeTimer = setInterval(() => {
        if (!this.inFlight && JSON.stringify(this.servingInputs()) !== this.publishedInputs) void this.tick();
      }, this.opts.changeCheckMs);
      this.changeTimer.unref();
    }
    await this.tick();
  }

  async stop(opts: { remove?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.changeTimer) clearInterval(this.changeTimer);
    this.timer = undefined;
    this.changeTimer = undefined;
    await this.inFlight?.catch(() => undefined);
    if (opts.remove) await this.opts.keyspace.del(this.key).catch((err: unknown) => this.opts.onError?.(err));
  }

  private servingInputs(): { servingConfig?: ServingConfig; mappedModels?: number } {
    return { servingConfig: this.opts.servingConfig?.(), mappedModels: this.opts.mappedModels?.() };
  }

  private async tick(): Promise<void> {
    try {
      await this.publishNow();
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
