/**
 * What-if replays off the event loop: each job runs in a worker thread (`replay-worker.ts`, built as its own entry
 * `out/main/replay-worker.js`). A console replay's worker reads this node's rows, asks the members for theirs and
 * replays them; a member's worker reads the rows the console's node asks it for and serializes them. One job at a time
 * per runner (a second while one runs is a 429), each bounded by a wall-clock budget (a 422 when it runs past it), and
 * stopped when its client leaves. The worker is terminated in every case; the slot is free again only once its
 * thread has exited.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { RouterError } from '../contract';
import { REPLAY_TIME_BUDGET_MS, type ReplayResultWire } from '../contract/replay';
import type { ReplaySettings } from '../lending/replay';
import { replayWorkerFile } from '../paths';
import type { ConsoleReplayInput, ReplayRange } from './replay-gather';

/** What a worker does, as plain data (it shares nothing with the node's thread): a console replay, or a member's rows. */
export type ReplayJob = ConsoleReplayJob | ReplaySourceJob;

export interface ConsoleReplayJob {
  kind: 'replay';
  /** This node's store folder: the worker reads its rows read-only. */
  storeDir: string;
  clusterToken: string;
  /** The healthy members whose rows the worker asks for (node API). */
  members: { nodeId: string; url: string }[];
  settings: ReplaySettings;
  input: ConsoleReplayInput;
  /** Per member (default 10 s). */
  memberTimeoutMs?: number;
}

/** This node's rows for a range, as the JSON the node API answers (`GET /router/v1/node/replay-source`). */
export interface ReplaySourceJob {
  kind: 'source';
  storeDir: string;
  range: ReplayRange;
}

/** What a worker posts back: log lines while it runs, then its result or its error. */
export type ReplayWorkerMessage =
  | { kind: 'log'; obj: Record<string, unknown>; msg: string }
  | { kind: 'result'; result: ReplayResultWire | string }
  | { kind: 'error'; status: number; code: string; message: string; type: string; param: string | null };

export interface ReplayRunnerOptions {
  /** Starts the worker for a job (default: the built `replay-worker.js`). */
  start?: (job: ReplayJob) => Worker;
  /** What the runner runs, for its 429 (`a what-if replay`). */
  what?: string;
  /** Wall-clock budget of one replay (default REPLAY_TIME_BUDGET_MS). */
  budgetMs?: number;
  /** Runs before a worker starts (the node writes its queued rows, so the worker reads them). */
  beforeStart?: () => void;
}

export function startReplayWorker(job: ReplayJob): Worker {
  const file = replayWorkerFile();
  if (!existsSync(file))
    throw new Error(`${file} is missing (the replay worker is built with the node: npm run build)`);
  return new Worker(file, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
}

const busy = (what: string) =>
  new RouterError(
    429,
    'replay_busy',
    `${what} is already running on this node (one at a time); retry when it has answered`,
    'rate_limit_error',
  );
const tooLong = (ms: number) =>
  new RouterError(
    422,
    'replay_time_budget',
    `the replay ran past its time budget of ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`} and was stopped: replay a shorter range, fewer events (maxEvents) or a longer scheduling_refresh_interval`,
  );
const clientLeft = () => new RouterError(499, 'client_closed', 'the client left; the replay was stopped');
const failed = (why: string) => new RouterError(500, 'replay_failed', `the replay failed: ${why}`);

export class ReplayRunner {
  private running = false;
  private current: Worker | undefined;

  constructor(private readonly o: ReplayRunnerOptions = {}) {}

  /** A replay is running (its worker has not exited yet). */
  get busy(): boolean {
    return this.running;
  }

  /**
   * Runs one job in a worker and resolves with what it posts (a replay's result, a source job's JSON); rejects with a
   * RouterError (429 busy, 422 over budget, 499 client left, 500 failed, or the worker's own, e.g. a 400).
   */
  run<T extends ReplayResultWire | string>(
    job: ReplayJob,
    ctx: { signal?: AbortSignal; log: FastifyBaseLogger },
  ): Promise<T> {
    if (this.running) return Promise.reject(busy(this.o.what ?? 'a what-if replay'));
    if (ctx.signal?.aborted) return Promise.reject(clientLeft());
    this.running = true;
    let worker: Worker;
    try {
      this.o.beforeStart?.();
      worker = (this.o.start ?? startReplayWorker)(job);
    } catch (err) {
      this.running = false;
      return Promise.reject(failed((err as Error).message));
    }
    this.current = worker;
    const range = job.kind === 'replay' ? job.input : job.range;
    ctx.log.info(
      `replay ${job.kind === 'replay' ? `started in a worker thread (${job.members.length} member(s) to read)` : 'rows read in a worker thread'}: ${range.to - range.from} ms of records`,
    );
    const budgetMs = this.o.budgetMs ?? REPLAY_TIME_BUDGET_MS;
    return new Promise((resolve, reject) => {
      let outcome: { result: T } | { error: RouterError } | undefined;
      const settle = (o: { result: T } | { error: RouterError }) => {
        if (outcome) return;
        outcome = o;
        void worker.terminate();
      };
      const timer = setTimeout(() => {
        ctx.log.warn(`replay stopped: past its time budget of ${budgetMs} ms`);
        settle({ error: tooLong(budgetMs) });
      }, budgetMs);
      const onAbort = () => {
        ctx.log.info('replay stopped: the client left');
        settle({ error: clientLeft() });
      };
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
      worker.on('message', (m: ReplayWorkerMessage) => {
        if (m.kind === 'log') ctx.log.warn(m.obj, m.msg);
        else if (m.kind === 'result') settle({ result: m.result as T });
        else settle({ error: new RouterError(m.status, m.code, m.message, m.type, m.param) });
      });
      worker.on('error', (err) => settle({ error: failed(err.message) }));
      worker.once('exit', (code) => {
        clearTimeout(timer);
        ctx.signal?.removeEventListener('abort', onAbort);
        this.running = false;
        this.current = undefined;
        const o = outcome ?? { error: failed(`the worker exited (code ${code}) without an answer`) };
        if ('result' in o) resolve(o.result);
        else reject(o.error);
      });
    });
  }

  /** Shutdown: terminates a running replay's worker. */
  async stop(): Promise<void> {
    await this.current?.terminate();
  }
}
