import type { EngineState } from '../../src-router/contract';

/** Pure display rules for the console. Every rule here has a unit test (test/unit/renderer-format.test.ts). */

export const DASH = '—';

/** A value the server did not report shows `—`, never a substituted default. */
export function orDash(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return DASH;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : DASH;
  return value.trim() === '' ? DASH : value;
}

/** First `length` characters of a hash (an optional `sha256:` style prefix is dropped first); `—` when absent. */
export function shortHash(hash: string | null | undefined, length = 12): string {
  if (!hash || hash.trim() === '') return DASH;
  const bare = hash.includes(':') ? hash.slice(hash.lastIndexOf(':') + 1) : hash;
  return bare.slice(0, length);
}

/** Context window in tokens with thousands separators (`8,192`); `—` when the config states none. */
export function formatContextSize(tokens: number | null | undefined): string {
  if (tokens === null || tokens === undefined || !Number.isFinite(tokens)) return DASH;
  return Math.round(tokens).toLocaleString('en-US');
}

/** A span written the way configs write it: `800ms`, `45s`, `5m`, `1m 30s`, `2h`, `1h 15m`. */
export function formatSpan(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
}

/**
 * Idle unload of a model (a model config's ttl, or an Ollama client's keep_alive): `never` without a limit,
 * `after each request` for 0, `after 5m idle` while it is not counting, `at 14:03:07` once its engine idles.
 */
export function formatIdleUnload(idleUnloadMs: number | null, unloadsAt: string | null): string {
  if (unloadsAt) {
    const at = Date.parse(unloadsAt);
    if (!Number.isNaN(at)) return `at ${formatClock(at)}`;
  }
  if (idleUnloadMs === null) return 'never';
  if (idleUnloadMs === 0) return 'after each request';
  return `after ${formatSpan(idleUnloadMs)} idle`;
}

export function formatCapabilities(capabilities: readonly string[]): string {
  return capabilities.length ? capabilities.join(', ') : DASH;
}

export type PillTone = 'ok' | 'busy' | 'bad' | 'idle';

const STATE_TONE: Record<EngineState, PillTone> = {
  ready: 'ok',
  starting: 'busy',
  stopping: 'busy',
  failed: 'bad',
  stopped: 'idle',
};

/** CSS class of an engine-state pill: `pill pill-ok` for ready, `pill-busy` while moving, `pill-bad` failed, `pill-idle` stopped or unknown. */
export function statePillClass(state: string): string {
  const tone = (STATE_TONE as Record<string, PillTone | undefined>)[state] ?? 'idle';
  return `pill pill-${tone}`;
}

/** Time since `startedAt` as `45s`, `12m`, `3h 5m`, `2d 4h`; `—` when the timestamp is missing or in the future. */
export function formatUptime(startedAt: string | null | undefined, now: number): string {
  if (!startedAt) return DASH;
  const started = Date.parse(startedAt);
  if (Number.isNaN(started) || started > now) return DASH;
  const s = Math.floor((now - started) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Clock time of a fetch (`14:03:07`), `—` before the first one. */
export function formatClock(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined) return DASH;
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Clock time with milliseconds (`14:03:07.042`), for decisions and arrivals; `—` when absent or unreadable. */
export function formatClockMs(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined || !Number.isFinite(epochMs)) return DASH;
  const d = new Date(epochMs);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** Local date and time with milliseconds (`2025-01-02 14:03:07.042`), for tooltips; `—` when absent. */
export function formatDateTimeMs(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined || !Number.isFinite(epochMs)) return DASH;
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${formatClockMs(epochMs)}`;
}

/**
 * A duration in milliseconds, as precise as it is short: `0 ms`, `741 ms`, `1.2 s`, `12 s`, `3m 5s`, `2h 3m`,
 * `14d 0h`; `—` when absent, negative or not a number.
 */
export function formatMillis(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) {
    const s = ms / 1000;
    return `${s < 10 ? String(Math.round(s * 10) / 10) : String(Math.round(s))} s`;
  }
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** `a on node` for a model on a node, as the router words it; `—` when the row names neither. */
export function formatModelRef(nodeId: string | null | undefined, model: string | null | undefined): string {
  if (!model && !nodeId) return DASH;
  return `${model ?? DASH} on ${nodeId ?? DASH}`;
}
