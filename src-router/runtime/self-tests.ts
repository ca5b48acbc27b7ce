import type { SelfTestResult } from './blob';

export type SelfTestStatus = 'pass' | 'warn' | 'fail';

/** What a check reports: its status and a one-line detail (which device, path or endpoint). */
export interface SelfTestOutcome {
  status: SelfTestStatus;
  detail: string;
}

export interface SelfTestCheck {
  name: string;
  run: () => Promise<SelfTestOutcome>;
}

/** A published result with this runner's status values. */
export interface SelfTestRun extends SelfTestResult {
  status: SelfTestStatus;
}

export interface RunSelfTestsOptions {
  /** Monotonic clock in ms (default `performance.now`). */
  now?: () => number;
  /** A check still running after this long fails as timed out (default 5000 ms). */
  timeoutMs?: number;
}

const MAX_DETAIL = 240;

/** Collapses whitespace (newlines included) to one line and truncates it. */
export function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_DETAIL ? `${flat.slice(0, MAX_DETAIL - 1)}…` : flat;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/**
 * Runs the checks one after another, in the given order, timing each. Never throws: a check that throws or
 * rejects is a `fail` with its message; one that outlives the timeout is a `fail` saying so (it is not awaited
 * further). `ms` is rounded to 0.1 ms.
 */
export async function runSelfTests(
  checks: readonly SelfTestCheck[],
  opts: RunSelfTestsOptions = {},
): Promise<SelfTestRun[]> {
  const now = opts.now ?? (() => performance.now());
  const timeoutMs = opts.timeoutMs ?? 5000;
  const results: SelfTestRun[] = [];
  for (const check of checks) {
    const started = now();
    let outcome: SelfTestOutcome;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<SelfTestOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ status: 'fail', detail: `timed out after ${timeoutMs} ms` }), timeoutMs);
        timer.unref();
      });
      outcome = await Promise.race([Promise.resolve().then(check.run), timeout]);
      if (outcome.status !== 'pass' && outcome.status !== 'warn' && outcome.status !== 'fail') {
        outcome = { status: 'fail', detail: `check returned an unknown status: ${String(outcome.status)}` };
      }
    } catch (err) {
      outcome = { status: 'fail', detail: errorText(err) };
    } finally {
      clearTimeout(timer);
    }
    const ms = Math.max(0, Math.round((now() - started) * 10) / 10);
    results.push({ name: check.name, detail: oneLine(outcome.detail ?? ''), ms, status: outcome.status });
  }
  return results;
}
