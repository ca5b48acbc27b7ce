/**
 * The fault suite's bookkeeping (pure): what a client got (ok, a clear error, a cut stream, nothing), the tally of a
 * scenario, and which requests ran at more than one engine, from the sim engines' seen rings (`GET /sim/seen`).
 *
 * Definitions (the table notes repeat them):
 * - ok: a 2xx answer read to its end (a stream: through `data: [DONE]`, with no error event);
 * - clear_error: an error status with a JSON error body carrying a message (OpenAI `{error: {message, code}}` or
 *   Ollama `{error: "…"}`), or a stream that carries an error event (`data: {"error": …}`) before it ends;
 * - unclear_error: an error status whose body says nothing readable, or a 2xx whose body is not what it claims;
 * - cut: the answer started (a status arrived) and the connection then closed before its end, with no error event:
 *   the client knows at once that it is incomplete (it does not hang), so it is neither ok nor lost;
 * - lost: no answer at all: the connection closed or reset before any status, or nothing (or nothing more) arrived
 *   within the client's time-out, i.e. a client that would hang.
 */
import type { SeenState } from '../engines/sim';

export interface RawAnswer {
  /** The HTTP status, null when none arrived. */
  status: number | null;
  /** What arrived of the body (streams in full, others up to a cap). */
  body: string;
  /** The body ended normally (a complete response), as opposed to a connection that closed or reset mid-way. */
  ended: boolean;
  /** The client gave up waiting (its time-out): a hang. */
  timedOut: boolean;
  /** The client asked for a stream (SSE). */
  stream: boolean;
}

export type Outcome =
  | { kind: 'ok' }
  | { kind: 'clear_error'; code: string; status: number; message: string }
  | { kind: 'unclear_error'; status: number }
  | { kind: 'cut' }
  | { kind: 'lost'; why: 'reset' | 'timeout' };

/** The error an error body or an SSE error event carries: `{error: {message, code}}` or `{error: "…"}`. */
export function errorOf(value: unknown, status: number): { code: string; message: string } | null {
  if (!value || typeof value !== 'object') return null;
  const e = (value as { error?: unknown }).error;
  if (typeof e === 'string' && e.trim()) return { code: `http_${status}`, message: e };
  if (!e || typeof e !== 'object') return null;
  const { message, code, type } = e as { message?: unknown; code?: unknown; type?: unknown };
  if (typeof message !== 'string' || !message.trim()) return null;
  const c =
    typeof code === 'string' && code
      ? code
      : typeof code === 'number'
        ? String(code)
        : typeof type === 'string' && type
          ? type
          : `http_${status}`;
  return { code: c, message };
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The `data:` payloads of an SSE body, in order (`[DONE]` as the string). */
export function sseData(body: string): string[] {
  const out: string[] = [];
  for (const line of body.split(/\r?\n/)) if (line.startsWith('data:')) out.push(line.slice(5).trim());
  return out;
}

/** What a stream carried: whether it finished, and its first error event. */
export function streamSummary(body: string): {
  done: boolean;
  error: { code: string; message: string } | null;
  events: number;
} {
  let done = false;
  let error: { code: string; message: string } | null = null;
  const data = sseData(body);
  for (const d of data) {
    if (d === '[DONE]') done = true;
    else if (!error) {
      const v = parseJson(d) as { choices?: unknown } | undefined;
      if (v && !v.choices) error = errorOf(v, 200);
    }
  }
  return { done, error, events: data.length };
}

export function classify(a: RawAnswer): Outcome {
  if (a.status === null) return { kind: 'lost', why: a.timedOut ? 'timeout' : 'reset' };
  if (a.status >= 200 && a.status < 300) {
    if (a.stream) {
      const s = streamSummary(a.body);
      if (s.error) return { kind: 'clear_error', code: s.error.code, status: a.status, message: s.error.message };
      if (s.done) return { kind: 'ok' };
      return a.timedOut ? { kind: 'lost', why: 'timeout' } : { kind: 'cut' };
    }
    if (a.timedOut) return { kind: 'lost', why: 'timeout' };
    if (!a.ended) return { kind: 'cut' };
    return parseJson(a.body) === undefined ? { kind: 'unclear_error', status: a.status } : { kind: 'ok' };
  }
  const e = errorOf(parseJson(a.body), a.status);
  return e
    ? { kind: 'clear_error', code: e.code, status: a.status, message: e.message }
    : { kind: 'unclear_error', status: a.status };
}

export interface Tally {
  sent: number;
  ok: number;
  clear_error: number;
  /** code → count of the clear errors. */
  errors: Record<string, number>;
  unclear_error: number;
  /** status → count of the unclear errors. */
  unclear: Record<string, number>;
  cut: number;
  lost: number;
  lost_reset: number;
  lost_timeout: number;
}

export function tally(outcomes: readonly Outcome[]): Tally {
  const t: Tally = {
    sent: outcomes.length,
    ok: 0,
    clear_error: 0,
    errors: {},
    unclear_error: 0,
    unclear: {},
    cut: 0,
    lost: 0,
    lost_reset: 0,
    lost_timeout: 0,
  };
  for (const o of outcomes) {
    if (o.kind === 'ok') t.ok++;
    else if (o.kind === 'clear_error') {
      t.clear_error++;
      t.errors[o.code] = (t.errors[o.code] ?? 0) + 1;
    } else if (o.kind === 'unclear_error') {
      t.unclear_error++;
      t.unclear[String(o.status)] = (t.unclear[String(o.status)] ?? 0) + 1;
    } else if (o.kind === 'cut') t.cut++;
    else {
      t.lost++;
      if (o.why === 'reset') t.lost_reset++;
      else t.lost_timeout++;
    }
  }
  return t;
}

/** `code ×n` pairs, most frequent first (table cells). */
export function errorSummary(errors: Record<string, number>, max = 3): string {
  const pairs = Object.entries(errors).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (!pairs.length) return '';
  const shown = pairs.slice(0, max).map(([c, n]) => `${c} ×${n}`);
  return pairs.length > max ? `${shown.join(', ')}, +${pairs.length - max} more` : shown.join(', ');
}

// ── requests seen at engines ─────────────────────────────────────────────────────────────────────────────────────

const MARKER = /\[fx:([0-9a-z]+)\]/;

/** The marker the bench puts at the start of every request's prompt: `[fx:<id>]`. */
export const markerText = (id: string) => `[fx:${id}]`;

/** The marker id in a prompt (head), or null. */
export function markerOf(text: string): string | null {
  return MARKER.exec(text)?.[1] ?? null;
}

export interface SeenSighting {
  head: string;
  state: SeenState;
  started: boolean;
  startedAt?: number | null;
  endedAt?: number | null;
}

/** What one engine process saw during a scenario. */
export interface EngineSeen {
  /** Its identity (node and pid). */
  engine: string;
  /**
   * The fault killed or froze it (or the node in front of it): whatever it was running, and even an answer it had just
   * finished, died with it, so running the request again elsewhere is the recovery, not a second run.
   */
  cutByFault: boolean;
  entries: readonly SeenSighting[];
}

export interface RunCount {
  /** Markers that ran (got an engine slot) at two or more engines, not counting runs at an engine the fault killed or froze. */
  run_twice: number;
  /** Markers seen at two or more engines (or twice at one), in any state: the literal count. */
  seen_twice: number;
  /** Markers completed (answered in full by the engine) at two or more engines. */
  answered_twice: number;
  /** Distinct markers of this scenario that reached some engine. */
  reached: number;
  /** A few run-twice markers with where they ran (for the log). */
  examples: string[];
}

/** Counts, per marker of `markers` (all markers when absent), where it was seen, ran and completed. */
export function countRuns(engines: readonly EngineSeen[], markers?: ReadonlySet<string>): RunCount {
  const by = new Map<string, { seen: number; runs: string[]; answered: number }>();
  for (const e of engines) {
    for (const s of e.entries) {
      const m = markerOf(s.head);
      if (!m || (markers && !markers.has(m))) continue;
      const r = by.get(m) ?? { seen: 0, runs: [], answered: 0 };
      r.seen++;
      if (s.state === 'completed') r.answered++;
      const ran = s.startedAt && s.endedAt ? `, ran ${s.endedAt - s.startedAt} ms` : '';
      if (s.started && !e.cutByFault) r.runs.push(`${e.engine} (${s.state}${ran})`);
      by.set(m, r);
    }
  }
  const twice = [...by.entries()].filter(([, r]) => r.runs.length >= 2);
  return {
    run_twice: twice.length,
    seen_twice: [...by.values()].filter((r) => r.seen >= 2).length,
    answered_twice: [...by.values()].filter((r) => r.answered >= 2).length,
    reached: by.size,
    examples: twice.slice(0, 5).map(([m, r]) => `${m} ran at ${r.runs.join(' and ')}`),
  };
}

/** VmRSS of a /proc/<pid>/status text, in MB (null when absent: the process is gone). */
export function vmRssMb(status: string): number | null {
  const m = /^VmRSS:\s*(\d+)\s*kB/m.exec(status);
  return m ? Number(m[1]) / 1024 : null;
}

/** The target of every row: nothing lost, nothing run twice (bad inputs: also every answer a clear 4xx). */
export function meetsTarget(row: {
  lost: number;
  run_twice: number;
  failures?: number;
  healthy_after?: boolean;
}): boolean {
  return row.lost === 0 && row.run_twice === 0 && (row.failures ?? 0) === 0 && row.healthy_after !== false;
}

/** One scenario's result: the keys every row has (`--json`), then the scenario's own. */
export interface FaultRow {
  benchmark: 'faults';
  scenario: string;
  sent: number;
  ok: number;
  clear_error: number;
  errors: Record<string, number>;
  lost: number;
  run_twice: number;
  rss_before_mb: number;
  rss_after_mb: number;
  unclear_error: number;
  unclear: Record<string, number>;
  cut: number;
  lost_reset: number;
  lost_timeout: number;
  seen_twice: number;
  answered_twice: number;
  /** Requests of the scenario that reached some engine. */
  reached_engines: number;
  /** What the fault did, in words (table notes). */
  note: string;
  meets: boolean;
  [extra: string]: unknown;
}

export function faultRow(
  scenario: string,
  outcomes: readonly Outcome[],
  runs: RunCount | null,
  rss: { before: number; after: number },
  extra: Record<string, unknown> & { note?: string; failures?: number; healthy_after?: boolean } = {},
): FaultRow {
  const t = tally(outcomes);
  const { note = '', ...rest } = extra;
  const row: FaultRow = {
    benchmark: 'faults',
    scenario,
    sent: t.sent,
    ok: t.ok,
    clear_error: t.clear_error,
    errors: t.errors,
    lost: t.lost,
    run_twice: runs?.run_twice ?? 0,
    rss_before_mb: rss.before,
    rss_after_mb: rss.after,
    unclear_error: t.unclear_error,
    unclear: t.unclear,
    cut: t.cut,
    lost_reset: t.lost_reset,
    lost_timeout: t.lost_timeout,
    seen_twice: runs?.seen_twice ?? 0,
    answered_twice: runs?.answered_twice ?? 0,
    reached_engines: runs?.reached ?? 0,
    note,
    meets: false,
    ...rest,
  };
  row.meets = meetsTarget(row as FaultRow & { failures?: number; healthy_after?: boolean });
  return row;
}
