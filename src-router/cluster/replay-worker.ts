/**
 * The replay worker's entry (built as `out/main/replay-worker.js`): one job in a worker thread, so the node's event
 * loop keeps serving while it runs. A console replay reads this node's rows read-only, asks the members for theirs
 * (gatherReplay) and replays them; a source job reads this node's rows for a member's request and serializes them.
 * It posts the result or the error, and ends. The node terminates it when its budget passes or its client leaves
 * (`replay-runner.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { RouterError } from '../contract';
import { REPLAY_SOURCE_CAP, REPLAY_SOURCE_HISTORY_CAP } from '../contract/replay';
import { openStoreReadOnly, readReplaySource } from '../store';
import { gatherReplay, type ReplayRange } from './replay-gather';
import type { ReplayJob, ReplayWorkerMessage } from './replay-runner';

const job = workerData as ReplayJob;
const post = (m: ReplayWorkerMessage) => parentPort!.postMessage(m);
// gatherReplay logs a member it could not read: the line goes to the node's log.
const log = {
  warn: (obj: Record<string, unknown>, msg: string) => post({ kind: 'log', obj, msg }),
} as unknown as FastifyBaseLogger;

/** This node's rows, with the caps the node API answers members with. */
function own(q: ReplayRange) {
  const db = openStoreReadOnly(job.storeDir);
  try {
    return readReplaySource(db, { ...q, cap: REPLAY_SOURCE_CAP, historyCap: REPLAY_SOURCE_HISTORY_CAP });
  } finally {
    db.close();
  }
}

try {
  if (job.kind === 'source') post({ kind: 'result', result: JSON.stringify(own(job.range)) });
  else
    post({
      kind: 'result',
      result: await gatherReplay(
        {
          clusterToken: job.clusterToken,
          own,
          members: () => job.members,
          settings: job.settings,
          log,
          timeoutMs: job.memberTimeoutMs,
        },
        job.input,
      ),
    });
} catch (err) {
  const e =
    err instanceof RouterError
      ? err
      : new RouterError(500, 'replay_failed', `the replay failed: ${(err as Error).message}`);
  post({ kind: 'error', status: e.status, code: e.code, message: e.message, type: e.type, param: e.param });
}
