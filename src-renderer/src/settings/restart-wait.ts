import type { HealthAnswer } from '../../../src-router/contract';
import type { ApiResult } from '../api/console-client';

/**
 * After a save that restarts the node: poll its `/health` until a node started after the one that took
 * the save answers (its `started_at` differs), within a bounded time. The clock and the pause are given, so tests
 * drive them. Tested in renderer-settings-store.test.ts.
 */

export const RESTART_TIMEOUT_MS = 30_000;
export const RESTART_POLL_MS = 250;

export interface RestartWaitOptions {
  probe(): Promise<ApiResult<HealthAnswer>>;
  /** `started_at` of the node that took the save; null when it could not be read (any answer then counts). */
  before: string | null;
  now(): number;
  sleep(ms: number): Promise<void>;
  timeoutMs?: number;
  everyMs?: number;
}

export type RestartWaitResult = { ok: true; health: HealthAnswer } | { ok: false; message: string };

export async function waitForRestart(o: RestartWaitOptions): Promise<RestartWaitResult> {
  const timeoutMs = o.timeoutMs ?? RESTART_TIMEOUT_MS;
  const deadline = o.now() + timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    const r = await o.probe();
    if (r.ok && r.value.started_at !== o.before) return { ok: true, health: r.value };
    last = r.ok ? 'the node that took the save still answers' : r.failure.message;
    if (o.now() >= deadline)
      return {
        ok: false,
        message: `the node did not come back within ${Math.round(timeoutMs / 1000)} s (last: ${last})`,
      };
    await o.sleep(o.everyMs ?? RESTART_POLL_MS);
  }
}

/** The same origin: the console can follow the node there (its CSP allows only the page's own origin). */
export function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
