import type { NodeModelRecord, NodeSnapshot } from '../contract';

/**
 * What a master takes from one member's snapshot. A node has a few lanes and rarely more than tens of model configs;
 * a member that advertises more makes the master merge, store and scrape more on every poll, so past these bounds its
 * records are dropped (each drop named in a warning the member's row shows and the log says once).
 */
export const MEMBER_BOUNDS = {
  /** Model records taken from one member (the first ones it advertises). */
  models: 256,
  /** Records of one member sharing one public ID (replicas by the operator's choice). */
  replicasPerId: 16,
  /** Characters of a public or local ID, a backend, an engine, a lane name. */
  idChars: 256,
  /** Characters of a config or weights hash. */
  hashChars: 128,
  /** Capabilities of one record, and characters of each. */
  capabilities: 32,
  capabilityChars: 64,
  /** Characters of the snapshot's node ID, version, settings hash, start time and public URL: over it, refused whole. */
  fieldChars: 2048,
  /** Lanes of a member's lending state (a node has at most four). */
  lanes: 8,
} as const;

export interface BoundedSnapshot {
  snapshot: NodeSnapshot;
  /** What was dropped and why, for the member's row and the log; empty when nothing was. */
  warnings: string[];
}

/** Why one record is refused: a string over its bound, or too many capabilities; null when it is taken. */
function recordRefusal(r: NodeModelRecord): string | null {
  const b = MEMBER_BOUNDS;
  for (const [field, value, max] of [
    ['publicId', r.publicId, b.idChars],
    ['localId', r.localId, b.idChars],
    ['backend', r.backend, b.idChars],
    ['engine', r.engine ?? '', b.idChars],
    ['configHash', r.configHash, b.hashChars],
    ['modelHash', r.modelHash ?? '', b.hashChars],
  ] as const) {
    if (value.length > max) return `${field} longer than ${max} characters`;
  }
  if (r.capabilities.length > b.capabilities) return `more than ${b.capabilities} capabilities`;
  if (r.capabilities.some((c) => c.length > b.capabilityChars))
    return `a capability longer than ${b.capabilityChars} characters`;
  return null;
}

/** A snapshot field over its bound: the whole snapshot is refused (the member is not taken in). */
export function snapshotRefusal(s: NodeSnapshot): string | null {
  for (const [field, value] of [
    ['nodeId', s.nodeId],
    ['version', s.version],
    ['settingsHash', s.settingsHash],
    ['startedAt', s.startedAt],
    ['publicUrl', s.publicUrl ?? ''],
  ] as const) {
    if (value.length > MEMBER_BOUNDS.fieldChars)
      return `its snapshot's ${field} is longer than ${MEMBER_BOUNDS.fieldChars} characters`;
  }
  return null;
}

/**
 * The member's snapshot as the master takes it: records with over-long fields dropped, at most `replicasPerId`
 * records per public ID and `models` records in all, in the member's order. Linear in the records advertised.
 */
export function boundSnapshot(s: NodeSnapshot): BoundedSnapshot {
  const b = MEMBER_BOUNDS;
  const kept: NodeModelRecord[] = [];
  const perId = new Map<string, number>();
  const refused = new Map<string, number>();
  let overPerId = 0;
  let overAll = 0;
  for (const r of s.models) {
    const why = recordRefusal(r);
    if (why) {
      refused.set(why, (refused.get(why) ?? 0) + 1);
      continue;
    }
    const n = perId.get(r.publicId) ?? 0;
    if (n >= b.replicasPerId) {
      overPerId++;
      continue;
    }
    if (kept.length >= b.models) {
      overAll++;
      continue;
    }
    perId.set(r.publicId, n + 1);
    kept.push(r);
  }
  const warnings: string[] = [];
  for (const [why, n] of refused) warnings.push(`${n} model record${n === 1 ? '' : 's'} dropped: ${why}`);
  if (overPerId)
    warnings.push(
      `${overPerId} model record${overPerId === 1 ? '' : 's'} dropped: more than ${b.replicasPerId} share a public ID`,
    );
  if (overAll)
    warnings.push(
      `advertised ${s.models.length} model records; only the first ${b.models} are taken (${overAll} dropped)`,
    );
  return { snapshot: kept.length === s.models.length ? s : { ...s, models: kept }, warnings };
}

/** A member's lending state as the master plans with it: at most `lanes` lanes and `models` models. */
export function boundLendingState<S extends { lanes: Record<string, unknown>; models: unknown[] }>(
  state: S,
): { state: S; warnings: string[] } {
  const warnings: string[] = [];
  let lanes = state.lanes;
  let models = state.models;
  const laneNames = Object.keys(lanes);
  if (laneNames.length > MEMBER_BOUNDS.lanes) {
    warnings.push(`reported ${laneNames.length} lanes; only the first ${MEMBER_BOUNDS.lanes} are taken`);
    lanes = Object.fromEntries(laneNames.slice(0, MEMBER_BOUNDS.lanes).map((k) => [k, state.lanes[k]]));
  }
  if (models.length > MEMBER_BOUNDS.models) {
    warnings.push(`reported ${models.length} lending models; only the first ${MEMBER_BOUNDS.models} are taken`);
    models = models.slice(0, MEMBER_BOUNDS.models);
  }
  return { state: warnings.length ? { ...state, lanes, models } : state, warnings };
}
