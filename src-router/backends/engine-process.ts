import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { type ClientRequest, request } from 'node:http';
import { setPriority } from 'node:os';
import type { EngineState } from '../contract';
import type { LaunchSpec } from '../engines';
import { engineEnv } from './engine-env';
import { groupAlive, signalGroup, waitUntil } from './engine-records';
import { LogRing } from './log-ring';

/** Engines run in their own process group (POSIX), so stopping one stops whatever it started. */
export const ENGINE_OWN_GROUP = process.platform !== 'win32';

/** Consecutive failed health checks after which a ready engine counts as hung. */
export const HUNG_AFTER_MISSES = 2;

/** Why a hung engine was killed; `serve/upstream` answers requests in it with 502 `engine_hung`. */
export const HUNG_REASON = 'stopped answering its health checks';

export interface EngineProcessOptions {
  localId: string;
  host: string;
  port: number;
  launch: LaunchSpec;
  healthPath: string;
  loadTimeoutMs: number;
  /** How often health is polled while starting. */
  pollMs?: number;
  /** CPU niceness of the engine process (backend.engine_nice): 0 leaves it as the node's. */
  nice?: number;
  /** While ready, health is checked this often (backend.health_interval); 0 or absent: never. */
  healthIntervalMs?: number;
  /** How long one such check may take before it counts as not answering (backend.health_timeout). */
  healthTimeoutMs?: number;
  /**
   * Whether the engine's HTTP answers its health path while it generates. False for engines whose server may block
   * during a job (sd-server, whisper-server): they are checked only while no request is at them, so a long job is
   * never mistaken for a hang.
   */
  healthWhileBusy?: boolean;
  /** Requests at the engine now (the lane's in-flight count). */
  busy?(): boolean;
}

/**
 * One engine child process and its state machine: stopped → starting → ready → stopping → stopped, or failed
 * (failed to start, exited on its own, or hung). Emits `spawned` with (pid, argv) once the process runs, and `exit`
 * with (code, signal, unexpected). While ready, its health path is checked every `healthIntervalMs`; after
 * HUNG_AFTER_MISSES checks in a row without a 2xx answer within `healthTimeoutMs` the engine is hung: it turns
 * `failed` at once (no new request is given to it), its process group is killed, and its exit is unexpected.
 */
export class EngineProcess extends EventEmitter {
  state: EngineState = 'stopped';
  readonly logs = new LogRing();
  lastError: string | null = null;
  exitCode: number | null = null;
  /** Set when the engine was killed for not answering its health checks. */
  hung = false;
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private healthTimer?: NodeJS.Timeout;
  private healthProbe?: ClientRequest;

  constructor(readonly opts: EngineProcessOptions) {
    super();
  }

  get pid() {
    return this.child?.pid;
  }

  /** Spawns the process and resolves once its health path answers 200; rejects with the reason otherwise (and kills it). */
  async start(): Promise<void> {
    if (this.state !== 'stopped' && this.state !== 'failed') throw new Error(`cannot start from state ${this.state}`);
    this.state = 'starting';
    this.lastError = null;
    const { launch } = this.opts;
    let spawnError: Error | undefined;
    const child = spawn(launch.command, launch.args, {
      env: engineEnv(process.env, launch.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: ENGINE_OWN_GROUP,
    });
    this.child = child;
    if (child.pid !== undefined) this.emit('spawned', child.pid, [launch.command, ...launch.args]);
    if (this.opts.nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.opts.nice);
      } catch (err) {
        this.logs.write(
          'stderr',
          `routerdesk: could not set the engine's niceness to ${this.opts.nice}: ${(err as Error).message}\n`,
        );
      }
    }
    child.stdout!.setEncoding('utf8').on('data', (d: string) => this.logs.write('stdout', d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => this.logs.write('stderr', d));
    child.stdin!.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        spawnError = err;
        this.onExit(null, null, err.message);
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.onExit(code, signal);
        resolve();
      });
    });
    const deadline = Date.now() + this.opts.loadTimeoutMs;
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`cannot run ${launch.command}: ${spawnError.message}`);
      if (this.state !== 'starting') throw new Error(this.lastError ?? 'engine exited while starting');
      if (await this.healthy()) {
        if (this.state !== 'starting') break;
        this.state = 'ready';
        this.watchHealth();
        return;
      }
      await sleep(this.opts.pollMs ?? 50);
    }
    const reason =
      this.state === 'starting'
        ? `not healthy within ${Math.round(this.opts.loadTimeoutMs / 1000)} s`
        : (this.lastError ?? 'engine exited while starting');
    await this.stop();
    this.state = 'failed';
    this.lastError = reason;
    throw new Error(reason);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: string) {
    this.stopHealth();
    const unexpected = this.hung || this.state === 'starting' || this.state === 'ready';
    this.exitCode = code;
    if (this.hung) {
      this.state = 'failed';
    } else if (unexpected) {
      const last = this.logs.lastLine();
      this.lastError =
        error ?? `engine exited (${signal ? `signal ${signal}` : `exit code ${code}`})${last ? `: ${last}` : ''}`;
      this.state = 'failed';
    } else {
      this.state = 'stopped';
    }
    // Whatever the engine started in its group would outlive it (an external engine's workers).
    if (unexpected && this.inOwnGroup()) signalGroup(this.child!.pid!, 'SIGKILL');
    this.emit('exit', code, signal, unexpected);
  }

  /** One health probe: while starting, 200 within a second; while ready (`ready`), any 2xx within the health timeout. */
  healthy(ready = false): Promise<boolean> {
    const timeoutMs = ready ? (this.opts.healthTimeoutMs ?? 5000) : 1000;
    return new Promise((resolve) => {
      const req = request(
        { host: this.opts.host, port: this.opts.port, path: this.opts.healthPath, method: 'GET', agent: false },
        (res) => {
          res.resume();
          const s = res.statusCode ?? 0;
          resolve(ready ? s >= 200 && s < 300 : s === 200);
        },
      );
      const timer = setTimeout(() => req.destroy(new Error('health check timed out')), timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('error', () => resolve(false));
      if (ready) {
        this.healthProbe = req;
        req.on('close', () => {
          if (this.healthProbe === req) this.healthProbe = undefined;
        });
      }
      req.end();
    });
  }

  /**
   * Health checks while ready, one at a time (the next is scheduled when the last has ended), only while
   * the state is `ready`: a stop, an exit or a hang ends them, so a check never overlaps a transition.
   */
  private watchHealth() {
    const every = this.opts.healthIntervalMs ?? 0;
    if (!(every > 0)) return;
    let misses = 0;
    const tick = async () => {
      this.healthTimer = undefined;
      if (this.state !== 'ready') return;
      if (this.opts.healthWhileBusy === false && this.opts.busy?.()) {
        misses = 0;
        this.healthTimer = setTimeout(() => void tick(), every);
        this.healthTimer.unref();
        return;
      }
      const ok = await this.healthy(true);
      if (this.state !== 'ready') return;
      misses = ok ? 0 : misses + 1;
      if (misses >= HUNG_AFTER_MISSES) return this.markHung(misses);
      this.healthTimer = setTimeout(() => void tick(), every);
      this.healthTimer.unref();
    };
    this.healthTimer = setTimeout(() => void tick(), every);
    this.healthTimer.unref();
  }

  private stopHealth() {
    clearTimeout(this.healthTimer);
    this.healthTimer = undefined;
    this.healthProbe?.destroy();
    this.healthProbe = undefined;
  }

  /** A ready engine that stopped answering: no new work goes to it, and its whole group is killed (its exit then counts as a crash). */
  private markHung(misses: number) {
    this.hung = true;
    this.state = 'failed';
    this.lastError = HUNG_REASON;
    this.logs.write(
      'stderr',
      `\nrouterdesk: the engine ${HUNG_REASON} (${misses} in a row, ${this.opts.healthTimeoutMs ?? 5000} ms each): killed\n`,
    );
    this.kill('SIGKILL');
  }

  private inOwnGroup(): boolean {
    return ENGINE_OWN_GROUP && this.child?.pid !== undefined;
  }

  /** Signals the engine's whole process group (POSIX), else the process itself. */
  private kill(signal: NodeJS.Signals) {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null && this.inOwnGroup() && signalGroup(child.pid!, signal))
      return;
    child.kill(signal);
  }

  /** SIGTERM to the engine's group, then SIGKILL after `graceMs`; resolves when the process and its group are gone. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopHealth();
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      if (this.state !== 'failed') this.state = 'stopping';
      this.kill('SIGTERM');
      const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    } else if (this.state !== 'failed') {
      this.state = 'stopped';
    }
    await this.stopGroup(graceMs);
  }

  /** What the engine started and left in its group after it exited: given the grace, then killed. */
  private async stopGroup(graceMs: number) {
    if (!this.inOwnGroup()) return;
    const pgid = this.child!.pid!;
    if (await waitUntil(() => !groupAlive(pgid), graceMs)) return;
    signalGroup(pgid, 'SIGKILL');
    await waitUntil(() => !groupAlive(pgid), graceMs);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
