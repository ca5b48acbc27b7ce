/**
 * `replay()`: the recorded arrivals of a time range through the lending rules in simulated time (`simulate.ts`),
 * compared with what was recorded (`recorded.ts`). Pure: the caller reads the stores (`store/replay-source.ts`).
 */
import type { ReplayResultWire } from '../../contract/replay';
import type { ReplaySource } from '../../store';
import type { LinkSpec } from '../types';
import { linksOfSources, recordedCluster } from './recorded';
import { settingsView } from './settings';
import { simulate } from './simulate';
import { lendingCounts, outcomeOf } from './summary';
import type { ReplaySettings } from './types';

export interface ReplayOptions {
  from: number;
  to: number;
  settings: ReplaySettings;
  /** Replaces the recorded links. */
  links?: LinkSpec[];
  maxEvents: number;
}

export function replay(sources: readonly ReplaySource[], o: ReplayOptions): ReplayResultWire {
  const links = o.links ?? linksOfSources(sources);
  const rec = recordedCluster(sources, { from: o.from, to: o.to, links, settings: o.settings });
  const sim = simulate(rec.input, o.maxEvents);
  return {
    from: o.from,
    to: o.to,
    nodes: rec.nodes,
    links: links.length,
    settings: settingsView(rec.input.settings),
    recorded: rec.recorded,
    replayed: outcomeOf(sim.requests, rec.bursts, lendingCounts(sim.decisions), sim.loads),
    events: sim.events,
    capped: sim.capped,
    unpriced: sim.unpriced,
  };
}

/** The links a replay takes (`--links FILE`, the console's): ids default to their position. */
export function replayLinks(
  wire: {
    id?: string;
    lane: 'image' | 'text';
    owner: { nodeId: string; model: string };
    helper: { nodeId: string; model: string };
    loadIfUnloaded: boolean;
    restoreAfterBorrow: boolean;
  }[],
): LinkSpec[] {
  return wire.map((l, i) => ({
    id: l.id ?? `replay-link-${i + 1}`,
    lane: l.lane,
    owner: l.owner,
    helper: l.helper,
    loadIfUnloaded: l.loadIfUnloaded,
    restoreAfterBorrow: l.restoreAfterBorrow,
  }));
}
