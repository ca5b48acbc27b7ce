/** The settings a replay runs with: the recorded node's cluster settings, with the changes asked for (pure). */

import { type NodeConfig, parseDuration } from '../../config';
import { RouterError } from '../../contract';
import { REPLAY_SETTING_KEYS, type ReplaySettingKey } from '../../contract/replay';
import type { ReplaySettings } from './types';

/**
 * Loopback timings the replay assumes where its record does not tell (an owner's event to its lease ~15 ms under a
 * burst; a relay hop a few ms). A record with leases answered to events and lent requests brings its own.
 */
export const DECISION_LATENCY_MS = 15;
export const RELAY_MS = 5;

export function replaySettingsOf(c: NodeConfig['cluster']): ReplaySettings {
  return {
    depth: c.scheduling_backend_depth,
    refreshIntervalMs: c.scheduling_refresh_interval,
    minSamples: c.scheduling_min_samples,
    sampleWindowMs: c.scheduling_sample_window,
    contextReserve: c.scheduling_context_reserve,
    probeIdleMs: c.offload_probe_idle,
    holdEnabled: c.offload_hold_for_faster_helper,
    decisionLatencyMs: DECISION_LATENCY_MS,
    relayMs: RELAY_MS,
  };
}

const FIELD: Record<ReplaySettingKey, { field: keyof ReplaySettings; kind: 'duration' | 'int' | 'bool' }> = {
  scheduling_backend_depth: { field: 'depth', kind: 'int' },
  scheduling_refresh_interval: { field: 'refreshIntervalMs', kind: 'duration' },
  scheduling_min_samples: { field: 'minSamples', kind: 'int' },
  scheduling_sample_window: { field: 'sampleWindowMs', kind: 'duration' },
  scheduling_context_reserve: { field: 'contextReserve', kind: 'int' },
  offload_probe_idle: { field: 'probeIdleMs', kind: 'duration' },
  offload_hold_for_faster_helper: { field: 'holdEnabled', kind: 'bool' },
};

const bad = (param: string, message: string) =>
  new RouterError(400, 'invalid_request', `${param}: ${message}`, 'invalid_request_error', param);

/** Applies `cluster.KEY` changes; a key the replay cannot change or a bad value is a 400 naming `settings.KEY`. */
export function withSettingChanges(
  base: ReplaySettings,
  changes: Record<string, unknown>,
  paramPrefix = 'settings',
): ReplaySettings {
  const out = { ...base };
  for (const [rawKey, value] of Object.entries(changes)) {
    const key = rawKey.replace(/^cluster\./, '');
    const param = `${paramPrefix}.${key}`;
    if (!(REPLAY_SETTING_KEYS as readonly string[]).includes(key))
      throw bad(param, `not a setting a replay can change (one of ${REPLAY_SETTING_KEYS.join(', ')})`);
    const f = FIELD[key as ReplaySettingKey];
    if (f.kind === 'bool') {
      const v = value === true || value === 'true' ? true : value === false || value === 'false' ? false : null;
      if (v === null) throw bad(param, `true or false, not ${JSON.stringify(value)}`);
      (out as Record<string, unknown>)[f.field] = v;
    } else if (f.kind === 'int') {
      const n =
        typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
      if (!Number.isInteger(n) || n < (key === 'scheduling_context_reserve' ? 0 : 1) || n > 1_000_000)
        throw bad(param, `a whole number, not ${JSON.stringify(value)}`);
      (out as Record<string, unknown>)[f.field] = n;
    } else {
      const ms = typeof value === 'number' || typeof value === 'string' ? parseDuration(value) : undefined;
      if (ms === undefined || !(ms >= 0) || ms > 30 * 86_400_000)
        throw bad(param, `a duration such as 5s or 250ms, not ${JSON.stringify(value)}`);
      if (key === 'scheduling_refresh_interval' && ms < 10) throw bad(param, 'at least 10ms');
      (out as Record<string, unknown>)[f.field] = ms;
    }
  }
  return out;
}

/**
 * The settings as the result shows them (cluster keys, ms for durations), and the decision latency and relay hop the
 * replay ran with (measured from the record where it tells, `measured-timings.ts`).
 */
export function settingsView(s: ReplaySettings): Record<string, number | boolean> {
  const ms = (x: number) => Math.round(x * 10) / 10;
  return {
    ...Object.fromEntries(Object.entries(FIELD).map(([k, f]) => [k, s[f.field] as number | boolean])),
    decision_latency_ms: ms(s.decisionLatencyMs),
    relay_ms: ms(s.relayMs),
  };
}
