import type { LeaseGrantWire, LendingNodeWire, LendingViewWire } from '../../../src-router/contract';
import { DASH, formatContextSize, formatMillis, formatModelRef, type PillTone, shortHash } from '../format';

/**
 * The Lending tab's live part (UI-1), pure, from `GET /router/v1/console/lending`: leases in force, each node's
 * build and whether it runs the master's settings, and the settings. Tested in renderer-lending-view.test.ts.
 */

export interface LeaseView {
  key: string;
  owner: string;
  helper: string;
  slots: string;
  ttl: string;
  /** `probe` (one request to learn a speed), `measured` (both speeds measured: may hold and cut off), `priced`. */
  basis: string;
  tone: PillTone;
  ownerJob: string;
  helperJob: string;
  helperSwitch: string;
  helperContext: string;
  linkId: string;
}

export function leaseRows(leases: readonly LeaseGrantWire[]): LeaseView[] {
  return leases.map((l) => ({
    key: `${l.linkId}:${l.owner.nodeId}/${l.owner.model}:${l.helper.nodeId}/${l.helper.model}`,
    owner: formatModelRef(l.owner.nodeId, l.owner.model),
    helper: formatModelRef(l.helper.nodeId, l.helper.model),
    slots: String(l.slots),
    ttl: formatMillis(l.ttlMs),
    basis: l.probe ? 'probe' : l.measured ? 'measured' : 'priced',
    tone: l.probe ? 'busy' : 'ok',
    ownerJob: formatMillis(l.ownerJobMs),
    helperJob: formatMillis(l.helperJobMs),
    helperSwitch: formatMillis(l.helperSwitchMs),
    helperContext: l.helperContextsize === undefined ? DASH : formatContextSize(l.helperContextsize),
    linkId: l.linkId,
  }));
}

export const NO_LEASES = 'No lease in force: no owner is lending right now.';

/** `decisions made: 47`; a node that is not a master makes none (null). */
export const decisionsMadeLabel = (n: number | null): string =>
  n === null ? 'not a master: decisions are made by the master' : `${n} decision${n === 1 ? '' : 's'} made`;

export interface SyncPill {
  label: string;
  tone: PillTone;
}

/**
 * Whether a node runs the master's settings. The first node of the view is the one answering (the master in a
 * cluster): it is the reference.
 */
export function settingsSync(node: Pick<LendingNodeWire, 'inSync' | 'settingsHash'>, isReference: boolean): SyncPill {
  if (isReference) return { label: 'reference', tone: 'ok' };
  if (node.settingsHash === null) return { label: 'not reported', tone: 'idle' };
  return node.inSync ? { label: "master's settings", tone: 'ok' } : { label: 'differs from master', tone: 'bad' };
}

export interface NodeBuildView {
  nodeId: string;
  build: string;
  settingsHash: string;
  settingsHashTitle: string;
  sync: SyncPill;
  health: SyncPill;
  linksVersion: string;
  /** The guardian settings version the node runs (GUARD-1): equal to the master's once its push is applied. */
  guardiansVersion: string;
}

export function nodeBuildRows(nodes: readonly LendingNodeWire[]): NodeBuildView[] {
  return nodes.map((n, i) => ({
    nodeId: n.nodeId,
    build: n.version ?? DASH,
    settingsHash: shortHash(n.settingsHash, 16),
    settingsHashTitle: n.settingsHash ?? 'not reported',
    sync: settingsSync(n, i === 0),
    health:
      i === 0
        ? { label: 'this node', tone: 'ok' }
        : n.healthy === false
          ? { label: 'unreachable', tone: 'bad' }
          : n.healthy
            ? { label: 'healthy', tone: 'ok' }
            : { label: DASH, tone: 'idle' },
    linksVersion: n.linksVersion === undefined ? DASH : String(n.linksVersion),
    guardiansVersion: n.guardiansVersion === undefined ? DASH : String(n.guardiansVersion),
  }));
}

/** Settings holding durations (ms once parsed): shown as durations, the raw number in the tooltip. */
const DURATION = /(_interval|_window|_idle|_delay|_timeout|_retention)$/;

export interface SettingView {
  key: string;
  value: string;
  raw: string;
}

export function settingRows(settings: LendingViewWire['settings']): SettingView[] {
  return Object.keys(settings)
    .sort()
    .map((key) => {
      const v = settings[key];
      const raw = v === null ? 'null' : String(v);
      let value: string;
      if (v === null) value = DASH;
      else if (typeof v === 'boolean') value = v ? 'on' : 'off';
      else if (typeof v === 'number' && DURATION.test(key)) value = formatMillis(v);
      else value = String(v);
      return { key, value, raw };
    });
}
