/** Runs `task` now and again `intervalMs` after each run finishes (never two at once). Returns a stop function. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof globalThis.setTimeout>),
};

export function startPolling(
  task: () => Promise<unknown>,
  intervalMs: number,
  timers: Timers = realTimers,
): () => void {
  let stopped = false;
  let handle: unknown = null;
  const tick = () => {
    handle = null;
    if (stopped) return;
    task()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) handle = timers.setTimeout(tick, intervalMs);
      });
  };
  tick();
  return () => {
    stopped = true;
    if (handle !== null) timers.clearTimeout(handle);
  };
}

export const REFRESH_INTERVAL_MS = 5_000;
