/**
 * The Lending tab's what-if replay, pure: the form's draft → the request of
 * `POST /router/v1/console/replay`, and its result → the rows shown side by side (recorded, replayed). The links
 * editor's rules are `replay-links.ts`.
 */
import {
  REPLAY_SETTING_KEYS,
  type ReplayRequestWire,
  type ReplayResultWire,
  type ReplaySettingKey,
} from '../../../src-router/contract/replay';
import { linkChanges, linksOfEdit, type ReplayLinksEdit } from './replay-links';

/** The ranges the card offers (the last N minutes); the second is the default. */
export const REPLAY_RANGES_MS = [5 * 60_000, 15 * 60_000, 60 * 60_000] as const;

/** How each setting is typed in: a duration (`30s`, `250ms`), a whole number, or on/off. */
export const REPLAY_SETTING_KINDS: Record<ReplaySettingKey, 'duration' | 'int' | 'bool'> = {
  scheduling_backend_depth: 'int',
  scheduling_refresh_interval: 'duration',
  scheduling_min_samples: 'int',
  scheduling_sample_window: 'duration',
  scheduling_context_reserve: 'int',
  offload_probe_idle: 'duration',
  offload_hold_for_faster_helper: 'bool',
};

/** The settings the form shows first (the rest follow). */
export const REPLAY_FORM_KEYS: readonly ReplaySettingKey[] = [
  'offload_probe_idle',
  'scheduling_backend_depth',
  ...REPLAY_SETTING_KEYS.filter((k) => k !== 'offload_probe_idle' && k !== 'scheduling_backend_depth'),
];

export interface ReplayDraft {
  rangeMs: number;
  /** Typed values; empty: as recorded. */
  settings: Partial<Record<ReplaySettingKey, string>>;
  /** The links edited (removed, added); null: the recorded links, untouched. */
  links: ReplayLinksEdit | null;
  /** The add-link picker's choices (option values `node/model`, empty: none picked). */
  linkPick: { owner: string; helper: string };
}

export const emptyReplayDraft = (): ReplayDraft => ({
  rangeMs: REPLAY_RANGES_MS[1],
  settings: {},
  links: null,
  linkPick: { owner: '', helper: '' },
});

export type DraftCheck = { ok: true; request: ReplayRequestWire } | { ok: false; field: string; message: string };

const DURATION = /^\d+(\.\d+)?\s*(ms|s|m|h|d)?$/;

/** The request for the draft at `now`; a value the node would refuse is named here first (`settings.KEY`). */
export function replayRequestOf(d: ReplayDraft, now: number): DraftCheck {
  const settings: Record<string, string | number | boolean> = {};
  for (const key of REPLAY_SETTING_KEYS) {
    const raw = d.settings[key]?.trim() ?? '';
    if (raw === '') continue;
    const field = `settings.${key}`;
    const kind = REPLAY_SETTING_KINDS[key];
    if (kind === 'int') {
      if (!/^\d{1,7}$/.test(raw)) return { ok: false, field, message: `${key}: a whole number, not "${raw}"` };
      settings[key] = Number(raw);
    } else if (kind === 'bool') {
      if (raw !== 'true' && raw !== 'false') return { ok: false, field, message: `${key}: on or off` };
      settings[key] = raw === 'true';
    } else {
      if (!DURATION.test(raw))
        return { ok: false, field, message: `${key}: a duration such as 30s or 250ms, not "${raw}"` };
      settings[key] = raw.replace(/\s+/g, '');
    }
  }
  const to = Math.floor(now);
  const links = linksOfEdit(d.links);
  return { ok: true, request: { from: Math.max(0, to - d.rangeMs), to, settings, ...(links ? { links } : {}) } };
}

/** The settings and links the draft changes (what the card says it replayed with). */
export function changedSettings(d: ReplayDraft): string[] {
  return REPLAY_FORM_KEYS.filter((k) => (d.settings[k]?.trim() ?? '') !== '')
    .map((k) => `${k}=${d.settings[k]!.trim()}`)
    .concat(linkChanges(d.links));
}

export interface ReplayRow {
  key: string;
  label: string;
  recorded: string;
  replayed: string;
  /** replayed / recorded, when both are numbers and recorded is not 0. */
  ratio: string;
  /** The two sides differ. */
  differs: boolean;
}

const fmtMs = (v: number | null | undefined): string =>
  v === null || v === undefined ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
const fmtCount = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : String(v));

function row(
  key: string,
  label: string,
  a: number | null | undefined,
  b: number | null | undefined,
  fmt: (v: number | null | undefined) => string,
): ReplayRow {
  const recorded = fmt(a);
  const replayed = fmt(b);
  const ratio =
    a === null || a === undefined || b === null || b === undefined || a === 0 ? '—' : `${(b / a).toFixed(2)}×`;
  return { key, label, recorded, replayed, ratio, differs: recorded !== replayed };
}

/** Recorded and replayed side by side: each burst's makespan, p50/p95 wait and completion, lent, returned, cut off, loads. */
export function replayRows(r: ReplayResultWire): ReplayRow[] {
  const rows: ReplayRow[] = [];
  const rec = r.recorded;
  const rep = r.replayed;
  const indices = [...new Set([...rec.bursts, ...rep.bursts].map((b) => b.index))].sort((x, y) => x - y);
  for (const i of indices) {
    const a = rec.bursts.find((b) => b.index === i);
    const b = rep.bursts.find((x) => x.index === i);
    rows.push(
      row(
        `burst-${i + 1}`,
        `burst ${i + 1} makespan${a ? ` (${a.requests} req)` : ''}`,
        a?.makespanMs,
        b?.makespanMs,
        fmtMs,
      ),
    );
  }
  rows.push(row('wait-p50', 'wait p50', rec.waitP50Ms, rep.waitP50Ms, fmtMs));
  rows.push(row('wait-p95', 'wait p95', rec.waitP95Ms, rep.waitP95Ms, fmtMs));
  rows.push(row('completion-p50', 'completion p50', rec.completionP50Ms, rep.completionP50Ms, fmtMs));
  rows.push(row('completion-p95', 'completion p95', rec.completionP95Ms, rep.completionP95Ms, fmtMs));
  rows.push(row('requests', 'requests', rec.requests, rep.requests, fmtCount));
  rows.push(row('lent', 'lent', rec.lent, rep.lent, fmtCount));
  rows.push(row('returned', 'returned', rec.returned, rep.returned, fmtCount));
  rows.push(row('cut-off', 'cut off', rec.cutOff, rep.cutOff, fmtCount));
  rows.push(row('loads', 'loads', rec.loads, rep.loads, fmtCount));
  return rows;
}

/** Notes under the table: an early stop, unpriced requests, members left out. */
export function replayNotes(r: ReplayResultWire): string[] {
  const notes: string[] = [];
  if (r.recorded.requests === 0) notes.push('no recorded requests in this range');
  if (r.capped) notes.push('the event cap stopped the replay early: the replayed numbers cover part of the range');
  if (r.unpriced > 0) notes.push(`${r.unpriced} request(s) had no measured service time anywhere (replayed at 0 ms)`);
  if (r.missing?.length) notes.push(`rows of ${r.missing.join(', ')} could not be read: replayed without them`);
  const decision = r.settings.decision_latency_ms;
  const relay = r.settings.relay_ms;
  if (typeof decision === 'number' && typeof relay === 'number') {
    notes.push(
      `replayed with the master's decisions taking ${decision} ms and a relay hop ${relay} ms, measured from the record (loopback values where it had none)`,
    );
  }
  return notes;
}

/** What a setting field shows while empty: the value the last replay ran with (`300ms`, `14d`), else "as recorded". */
export function settingPlaceholder(r: ReplayResultWire | null, key: ReplaySettingKey): string {
  const v = r?.settings[key];
  if (v === undefined) return 'as recorded';
  if (REPLAY_SETTING_KINDS[key] !== 'duration' || typeof v !== 'number') return String(v);
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (v >= size && v % size === 0) return `${v / size}${unit}`;
  return `${v}ms`;
}
