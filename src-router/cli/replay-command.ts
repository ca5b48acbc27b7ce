/**
 * `routerdesk replay --store DIR [--store DIR …] [--from T] [--to T] [--config FILE] [--set cluster.KEY=VALUE …]
 * [--links FILE] [--json FILE] [--max-events N]`: the recorded arrivals of the stores given replayed through the
 * lending rules in simulated time (lending/replay), printed as recorded and as replayed side by side.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadNodeConfig, parseNodeConfig } from '../config';
import { RouterError } from '../contract';
import {
  REPLAY_MAX_EVENTS,
  type ReplayOutcomeWire,
  type ReplayResultWire,
  replayLinksSchema,
} from '../contract/replay';
import { replay, replayLinks, replaySettingsOf, withSettingChanges } from '../lending/replay';
import { openStoreReadOnly, type ReplaySource, readReplaySource } from '../store';

const USAGE = `usage: routerdesk replay --store DIR [--store DIR …] [--from T] [--to T] [--config FILE]
                        [--set cluster.KEY=VALUE …] [--links FILE] [--json FILE] [--max-events N]
  --store DIR     a node's store folder (give every node's to replay lending between them)
  --from/--to T   time range of the arrivals replayed (unix ms or ISO 8601; default: everything recorded)
  --config FILE   the recorded settings (a node config file; default: the built-in defaults)
  --set K=V       a changed cluster setting, e.g. --set cluster.offload_probe_idle=30s
  --links FILE    JSON list of links replacing the recorded ones ({owner:{nodeId,model}, helper:{…}, lane, …})
  --json FILE     also write the result as JSON
`;

function time(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(n)) throw new ConfigError(`--${name}: not a time (unix ms or ISO 8601): ${v}`);
  return n;
}

export async function replayCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      store: { type: 'string', multiple: true },
      from: { type: 'string' },
      to: { type: 'string' },
      config: { type: 'string' },
      set: { type: 'string', multiple: true },
      links: { type: 'string' },
      json: { type: 'string' },
      'max-events': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help || !values.store?.length) {
    process.stdout.write(USAGE);
    if (!values.help) process.exitCode = 2;
    return;
  }
  const config = values.config ? loadNodeConfig(values.config) : parseNodeConfig({});
  const changes: Record<string, string> = {};
  for (const s of values.set ?? []) {
    const i = s.indexOf('=');
    if (i < 1) throw new ConfigError(`--set ${s}: expected cluster.KEY=VALUE`);
    changes[s.slice(0, i)] = s.slice(i + 1);
  }
  let settings;
  try {
    settings = withSettingChanges(replaySettingsOf(config.cluster), changes, '--set cluster');
  } catch (err) {
    throw err instanceof RouterError ? new ConfigError(err.message) : err;
  }
  let links;
  if (values.links) {
    const parsed = replayLinksSchema.safeParse(JSON.parse(readFileSync(values.links, 'utf8')));
    if (!parsed.success)
      throw new ConfigError(
        `--links ${values.links}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    links = replayLinks(parsed.data);
  }
  const from = time(values.from, 'from') ?? 0;
  const to = time(values.to, 'to') ?? Number.MAX_SAFE_INTEGER;
  const maxEvents = values['max-events'] ? Number(values['max-events']) : REPLAY_MAX_EVENTS;
  if (!Number.isInteger(maxEvents) || maxEvents < 1)
    throw new ConfigError(`--max-events: a whole number, not ${values['max-events']}`);
  const sources: ReplaySource[] = values.store.map((dir) => {
    const db = openStoreReadOnly(dir);
    try {
      return readReplaySource(db, { from, to });
    } finally {
      db.close();
    }
  });
  const result = replay(sources, { from, to, settings, links, maxEvents });
  process.stdout.write(formatReplay(result));
  if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
}

const ms = (v: number | null) => (v === null ? '—' : `${Math.round(v)} ms`);
const ratio = (a: number | null, b: number | null) =>
  a === null || b === null || a === 0 ? '—' : `${(b / a).toFixed(2)}×`;

/** The side-by-side table the CLI prints. */
export function formatReplay(r: ReplayResultWire): string {
  const rows: [string, string, string, string][] = [];
  const line = (label: string, a: number | null, b: number | null, fmt = ms) =>
    rows.push([label, fmt(a), fmt(b), ratio(a, b)]);
  const n = (v: number | null) => (v === null ? '—' : String(v));
  const rec = r.recorded;
  const rep = r.replayed;
  for (const b of rec.bursts)
    line(
      `burst ${b.index + 1} makespan (${b.requests} req)`,
      b.makespanMs,
      rep.bursts.find((x) => x.index === b.index)?.makespanMs ?? null,
    );
  const keys: [keyof ReplayOutcomeWire, string][] = [
    ['waitP50Ms', 'wait p50'],
    ['waitP95Ms', 'wait p95'],
    ['completionP50Ms', 'completion p50'],
    ['completionP95Ms', 'completion p95'],
  ];
  for (const [k, label] of keys) line(label, rec[k] as number | null, rep[k] as number | null);
  for (const [k, label] of [
    ['requests', 'requests'],
    ['lent', 'lent'],
    ['returned', 'returned'],
    ['cutOff', 'cut off'],
    ['loads', 'loads'],
  ] as const)
    line(label, rec[k], rep[k], n);
  const w = [0, 1, 2, 3].map((i) =>
    Math.max(...[['', 'recorded', 'replayed', 'replayed/recorded'], ...rows].map((x) => x[i].length)),
  );
  const fmt = (x: string[]) => x.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  const head = `replay of ${r.nodes.join(', ') || 'no nodes'} (${r.links} link${r.links === 1 ? '' : 's'}), ${r.events} simulated events${r.capped ? ' — CAPPED: the replay stopped early' : ''}${r.unpriced ? `, ${r.unpriced} unpriced request(s)` : ''}\n`;
  const settings = `settings: ${Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}\n`;
  return head + settings + [fmt(['', 'recorded', 'replayed', 'replayed/recorded']), ...rows.map(fmt)].join('\n') + '\n';
}
