import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import { setPriority } from 'node:os';
import type { EngineState } from '../contract';
import type { LaunchSpec } from '../engines';
import { LogRing } from './log-ring';

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
}

/**
 * One engine child process and its state machine: stopped → starting → ready → stopping → stopped, or failed
 * (failed to start, or exited on its own). Emits `exit` with (code, signal, unexpected).
 */
export class EngineProcess extends EventEmitter {
  state: EngineState = 'stopped';
  readonly logs = new LogRing();
  lastError: string | null = null;
  exitCode: number | null = null;
  private child?: ChildProcess;
  private exited?: Promise<void>;

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
    const child = spawn(launch.command, launch.args, { env: { ...process.env, ...launch.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    if (this.opts.nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.opts.nice);
      } catch (err) {
        this.logs.write('stderr', `routerdesk: could not set the engine's niceness to ${this.opts.nice}: ${(err as Error).message}\n`);
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
        return;
      }
      await sleep(this.opts.pollMs ?? 50);
    }
    const reason = this.state === 'starting' ? `not healthy within ${Math.round(this.opts.loadTimeoutMs / 1000)} s` : (this.lastError ?? 'engine exited while starting');
    await this.stop();
    this.state = 'failed';
    this.lastError = reason;
    throw new Error(reason);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: string) {
    const unexpected = this.state === 'starting' || this.state === 'ready';
    this.exitCode = code;
    if (unexpected) {
      const last = this.logs.lastLine();
      this.lastError = error ?? `engine exited (${signal ? `signal ${signal}` : `exit code ${code}`})${last ? `: ${last}` : ''}`;
      this.state = 'failed';
    } else {
      this.state = 'stopped';
    }
    this.emit('exit', code, signal, unexpected);
  }

  /** One health probe with a short timeout. */
  healthy(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = request({ host: this.opts.host, port: this.opts.port, path: this.opts.healthPath, method: 'GET', timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      if (this.state !== 'failed') this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
