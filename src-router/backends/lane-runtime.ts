import type { EngineState, Lane } from '../contract';
import type { ClientGone } from './call-end';
import type { EngineProcess } from './engine-process';
import { EngineError, engineHeld, engineStartFailed } from './errors';

/** An engine that stays up this long after starting has shaken off earlier failures. */
const STABLE_MS = 60_000;
/** The longest idle-unload wait a timer can hold (2^31 − 1 ms, about 24.8 days). */
const MAX_IDLE_MS = 2 ** 31 - 1;

/** What a lane needs from the supervisor: make a process for a config, record a load. */
export interface LaneHost {
  createProcess(localId: string): Promise<EngineProcess>;
  publicIdOf(localId: string): string;
  onLoad(load: {
    localId: string;
    durationMs: number;
    success: boolean;
    displaced: string | null;
    error: string | null;
  }): void;
  /** How long the loaded engine of `localId` may stay idle before it is stopped (keep_alive, a model's ttl); null: no limit. */
  idleUnloadMs(localId: string): number | null;
  /** The engine of `localId` was stopped after idling (the model unloaded). */
  onIdleUnload?(localId: string): void;
  /**
   * The running engine of `localId` was started from a config that is no longer the one in force (changed or removed):
   * it is stopped once the lane is idle, and started again with the new config if `localId` still runs on this lane.
   */
  stale?(localId: string, proc: EngineProcess): boolean;
  /** `localId` is still configured on this lane (not removed, not moved to another lane). */
  configured?(localId: string): boolean;
  maxRestarts: number;
  restartCooldownMs: number;
  now(): number;
}

/** How a request at the engine ended, as the lane needs it for service times (PRICE-2). `unused`: never sent to the engine. */
export type LeaseEnd = 'done' | 'cancelled' | 'unused';

/** A granted use of a ready engine; call `release()` exactly once when the request is over. */
export interface EngineLease {
  localId: string;
  port: number;
  host: string;
  /** Time the request waited for the engine (queue + load), ms. */
  waitedMs: number;
  process: EngineProcess;
  /**
   * `done`: the engine answered (successfully or not), so it worked on this job until now; `cancelled`: the client
   * left, and when the engine stopped working on it is unknown. Returns the job's derived service time.
   */
  release(end?: LeaseEnd): number | null;
}

/**
 * PRICE-2, derived service time of one job on a one-at-a-time engine: it finished at `finishAt`, and the engine
 * could start it only once it was dispatched and the job before it on the same runtime had finished. Null when a
 * cancellation since its dispatch makes the previous finish unknown (the engine may have stopped the other job at
 * any moment after its client left). Pure.
 */
export function derivedServiceMs(
  dispatchedAt: number,
  finishAt: number,
  previousFinishAt: number | null,
  cancelledSince: number | null,
): number | null {
  if (cancelledSince !== null && cancelledSince >= dispatchedAt) return null;
  return Math.max(0, finishAt - Math.max(dispatchedAt, previousFinishAt ?? -Infinity));
}

interface Waiter {
  localId: string;
  since: number;
  resolve(lease: EngineLease): void;
  reject(err: Error): void;
}

/**
 * One runtime slot (text side, image side, whisper, or the shared Kobold process): one engine process at a time.
 * Waiters are served first-come first-served; a waiter for another model waits for in-flight requests to drain,
 * then the lane switches (stop, start, wait for health). Requests for the loaded model behind it wait too,
 * so a switch is never starved.
 */
export class LaneRuntime {
  current: { localId: string; proc: EngineProcess } | null = null;
  inflight = 0;
  switching: string | null = null;
  private readonly queue: Waiter[] = [];
  private readonly failures = new Map<string, { count: number; heldUntil: number; reason: string }>();
  /** The process being started, so a shutdown during a load stops it too. */
  private loading: EngineProcess | null = null;
  private stopped = false;
  private stableTimer?: NodeJS.Timeout;
  /** The last time a job at this runtime's engine finished (the engine answered), for service times. */
  private lastFinishAt: number | null = null;
  /** The last time a job here was cancelled before its answer ended. */
  private lastCancelAt: number | null = null;
  /** A model whose engine was killed as hung: restarted once its in-flight requests have failed. */
  private restartPending: string | null = null;
  /** The last successful load per model: when it ended and how long it took (Ollama's load_duration). */
  private readonly lastLoads = new Map<string, { at: number; durationMs: number }>();
  /** Idle unload: armed only while the loaded engine has nothing to do; any request cancels it. */
  private idle: { timer: NodeJS.Timeout; at: number } | null = null;
  /** The engine being stopped after idling: nothing starts on this lane until it is gone. */
  private unloading: { localId: string; done: Promise<void> } | null = null;

  constructor(
    readonly lane: Lane,
    private readonly host: LaneHost,
  ) {}

  get queued() {
    return this.queue.length;
  }

  stateOf(localId: string): EngineState {
    if (this.switching === localId) return 'starting';
    if (this.unloading?.localId === localId) return 'stopping';
    if (this.current?.localId === localId) return this.current.proc.state;
    const f = this.failures.get(localId);
    return f && f.count > 0 ? 'failed' : 'stopped';
  }

  /** False while the model is held after repeated failed starts (HEALTH-3: a local model is selected only when its lane can serve it). */
  availableFor(localId: string): boolean {
    const f = this.failures.get(localId);
    return !f || f.heldUntil <= this.host.now();
  }

  /** Requests waiting in this lane for `localId`. */
  queuedFor(localId: string): number {
    return this.queue.filter((w) => w.localId === localId).length;
  }

  lastErrorOf(localId: string): string | null {
    if (this.current?.localId === localId && this.current.proc.lastError) return this.current.proc.lastError;
    return this.failures.get(localId)?.reason ?? null;
  }

  /** When the loaded engine of `localId` will be stopped if nothing else arrives (epoch ms); null when no idle unload is armed. */
  unloadsAt(localId: string): number | null {
    return this.idle && this.current?.localId === localId ? this.idle.at : null;
  }

  /** The last successful load of `localId` on this lane, if any. */
  lastLoadOf(localId: string): { at: number; durationMs: number } | undefined {
    return this.lastLoads.get(localId);
  }

  /** Re-reads the idle-unload time of the loaded model (it changed): re-armed now if the engine is idle. */
  idleChanged(): void {
    this.pump();
  }

  /**
   * Waits for the runtime with `localId` loaded. `client` gone while waiting: rejected (499), its place given up. A
   * `ClientGone`, not an AbortSignal: no AbortController per request, and its listener goes once the wait is over.
   */
  acquire(localId: string, client?: ClientGone): Promise<EngineLease> {
    return new Promise((resolve, reject) => {
      if (client?.aborted) return reject(new EngineError('request cancelled by the client', 499, 'client_closed'));
      let unlisten: (() => void) | undefined;
      const waiter: Waiter = {
        localId,
        since: this.host.now(),
        resolve: (lease) => {
          unlisten?.();
          resolve(lease);
        },
        reject: (err) => {
          unlisten?.();
          reject(err);
        },
      };
      this.queue.push(waiter);
      this.disarmIdle();
      unlisten = client?.onAbort(() => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) {
          this.queue.splice(i, 1);
          reject(new EngineError('request cancelled by the client', 499, 'client_closed'));
          this.pump();
        }
      });
      this.pump();
    });
  }

  private grant(w: Waiter) {
    const cur = this.current!;
    this.inflight++;
    let released = false;
    let service: number | null = null;
    const dispatchedAt = this.host.now();
    w.resolve({
      localId: cur.localId,
      port: cur.proc.opts.port,
      host: cur.proc.opts.host,
      waitedMs: dispatchedAt - w.since,
      process: cur.proc,
      release: (end: LeaseEnd = 'done') => {
        if (released) return service;
        released = true;
        const at = this.host.now();
        if (end === 'done') {
          service = derivedServiceMs(dispatchedAt, at, this.lastFinishAt, this.lastCancelAt);
          this.lastFinishAt = at;
        } else if (end === 'cancelled') {
          this.lastCancelAt = at;
        }
        this.inflight--;
        this.pump();
        return service;
      },
    });
  }

  private pump() {
    this.pumpQueue();
    this.settleGone();
  }

  private pumpQueue() {
    while (this.queue.length) {
      this.disarmIdle();
      const head = this.queue[0];
      if (
        this.current?.localId === head.localId &&
        this.current.proc.state === 'ready' &&
        !this.isStale(this.current)
      ) {
        this.queue.shift();
        this.grant(head);
        continue;
      }
      if (this.switching || this.unloading || this.inflight > 0) return;
      const held = this.failures.get(head.localId);
      if (held && held.heldUntil > this.host.now()) {
        this.rejectAll(
          head.localId,
          engineHeld(this.host.publicIdOf(head.localId), held.reason, held.heldUntil - this.host.now()),
        );
        continue;
      }
      this.startLoad(head.localId);
      return;
    }
    // Nobody waits and nothing runs: an engine started from a config no longer in force is switched now (restarted
    // with the new config, or stopped when its model was removed), as a model switch waits for the lane to drain.
    const cur = this.current;
    if (cur && !this.stopped && !this.switching && !this.unloading && this.inflight === 0 && this.isStale(cur)) {
      if (this.host.configured?.(cur.localId) ?? true) this.startLoad(cur.localId);
      else this.unload(cur);
      return;
    }
    // Nobody waits: a hung engine's model is restarted now rather than on its next request, unless it
    // is held after repeated failures (bounded restart).
    const again = this.restartPending;
    if (again && !this.stopped && !this.switching && this.inflight === 0) {
      this.restartPending = null;
      if (this.current?.localId === again && this.availableFor(again)) this.startLoad(again);
    }
    this.armIdle();
  }

  /** Nothing to do and a model loaded: its engine is stopped after its idle-unload time, unless a request comes first. */
  private armIdle() {
    this.disarmIdle();
    const cur = this.current;
    if (
      !cur ||
      this.stopped ||
      this.switching ||
      this.unloading ||
      this.inflight > 0 ||
      this.queue.length ||
      cur.proc.state !== 'ready'
    )
      return;
    const ms = this.host.idleUnloadMs(cur.localId);
    if (ms === null) return;
    const wait = Math.min(Math.max(0, ms), MAX_IDLE_MS);
    const timer = setTimeout(() => {
      this.idle = null;
      if (this.current !== cur || this.inflight > 0 || this.queue.length || this.switching || this.stopped) return;
      this.unload(cur);
    }, wait);
    timer.unref();
    this.idle = { timer, at: this.host.now() + wait };
  }

  /** Stops the idle engine `cur`; nothing starts on this lane until it is gone. */
  private unload(cur: { localId: string; proc: EngineProcess }) {
    this.current = null;
    const done = cur.proc.stop().finally(() => {
      this.unloading = null;
      this.host.onIdleUnload?.(cur.localId);
      this.pump();
    });
    this.unloading = { localId: cur.localId, done };
  }

  private isStale(cur: { localId: string; proc: EngineProcess }): boolean {
    return this.host.stale?.(cur.localId, cur.proc) ?? false;
  }

  /** Nothing of `localId` runs, loads or stops on this lane. */
  holds(localId: string): boolean {
    return this.current?.localId === localId || this.switching === localId || this.unloading?.localId === localId;
  }

  /** Resolves once this lane holds nothing of `localId` (its running requests ended and its engine stopped). */
  whenGone(localId: string): Promise<void> {
    if (!this.holds(localId)) return Promise.resolve();
    return new Promise((resolve) => {
      this.goneWaiters.push({ localId, resolve });
      this.pump();
    });
  }

  private goneWaiters: { localId: string; resolve(): void }[] = [];

  private settleGone() {
    if (!this.goneWaiters.length) return;
    this.goneWaiters = this.goneWaiters.filter((w) => {
      if (this.holds(w.localId)) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * `localId`'s config changed or was removed: its failure count and hold are forgotten (a new config gets a fresh
   * start), requests still waiting for it get `err` when given, and a stale engine is switched once the lane is idle.
   */
  configChanged(localId: string, err?: Error): void {
    this.failures.delete(localId);
    if (err) this.rejectAll(localId, err);
    if (this.restartPending === localId) this.restartPending = null;
    this.pump();
  }

  private disarmIdle() {
    if (!this.idle) return;
    clearTimeout(this.idle.timer);
    this.idle = null;
  }

  /** Loads `localId` on this lane; one load at a time (`switching`), and the queue is served again when it ends. */
  private startLoad(localId: string) {
    this.switching = localId;
    void this.load(localId).finally(() => {
      this.switching = null;
      this.pump();
    });
  }

  private rejectAll(localId: string, err: Error) {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].localId === localId) this.queue.splice(i, 1)[0].reject(err);
    }
  }

  /** Stops what the lane holds (if anything else or broken) and starts `localId`. */
  private async load(localId: string): Promise<void> {
    this.restartPending = null;
    const previous = this.current;
    const displaced =
      previous && previous.localId !== localId && previous.proc.state === 'ready' ? previous.localId : null;
    if (previous) {
      this.current = null;
      await previous.proc.stop();
    }
    const started = this.host.now();
    let proc: EngineProcess | undefined;
    try {
      proc = await this.host.createProcess(localId);
      this.loading = proc;
      await proc.start();
      this.loading = null;
      if (this.stopped) {
        await proc.stop();
        return;
      }
      this.current = { localId, proc };
      // A fresh engine has no job before its first one.
      this.lastFinishAt = null;
      this.lastCancelAt = null;
      this.watchCrashes(localId, proc);
      const at = this.host.now();
      this.lastLoads.set(localId, { at, durationMs: at - started });
      this.host.onLoad({ localId, durationMs: at - started, success: true, displaced, error: null });
    } catch (err) {
      this.loading = null;
      if (this.stopped) return;
      const reason = (err as Error).message;
      this.countFailure(localId, reason);
      this.host.onLoad({ localId, durationMs: this.host.now() - started, success: false, displaced, error: reason });
      this.rejectAll(localId, engineStartFailed(this.host.publicIdOf(localId), reason));
    }
  }

  private countFailure(localId: string, reason: string) {
    const f = this.failures.get(localId) ?? { count: 0, heldUntil: 0, reason };
    f.count++;
    f.reason = reason;
    if (f.count >= this.host.maxRestarts) f.heldUntil = this.host.now() + this.host.restartCooldownMs;
    this.failures.set(localId, f);
  }

  /**
   * Bounded restart: a crash of a ready engine counts like a failed start, and the count only clears once the engine
   * has stayed up for a while, so an engine that crashes on every request is held instead of reloaded forever.
   */
  private watchCrashes(localId: string, proc: EngineProcess) {
    clearTimeout(this.stableTimer);
    this.stableTimer = setTimeout(() => this.failures.delete(localId), STABLE_MS);
    this.stableTimer.unref();
    proc.once('exit', (_code: number | null, _signal: string | null, unexpected: boolean) => {
      if (!unexpected) return;
      clearTimeout(this.stableTimer);
      this.countFailure(localId, proc.lastError ?? 'engine exited');
      // A hung engine was killed by its health checks, not by a request: bring it back without waiting for one.
      if (proc.hung && this.current?.proc === proc && !this.stopped) {
        this.restartPending = localId;
        this.pump();
      }
    });
  }

  /** Stops the engine (when idle or forced at shutdown, a load under way included) and fails whoever still waits. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.restartPending = null;
    this.disarmIdle();
    clearTimeout(this.stableTimer);
    for (const w of this.queue.splice(0)) w.reject(new EngineError('node is shutting down', 503, 'shutting_down'));
    const cur = this.current;
    this.current = null;
    await Promise.all([cur?.proc.stop(), this.loading?.stop(), this.unloading?.done]);
    this.settleGone();
  }
}
