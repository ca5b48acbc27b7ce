import type { ModelConfig, ModelConfigFile } from '../config';
import { canonicalJson } from './config-hash';

/** One file of the models folder as read: a config that parsed, or none (the file is invalid now). */
export interface ReadConfig {
  localId: string;
  file: string;
  config: ModelConfig | null;
}

export interface ConfigSetDiff {
  /** Files whose config is new to the node. */
  added: ModelConfigFile[];
  /** Files whose config differs from the one in force. */
  changed: ModelConfigFile[];
  /** Local IDs in force whose file is gone. */
  removed: string[];
  /** Local IDs in force whose file does not parse now: their last good config stays. */
  kept: string[];
}

/**
 * What taking in the models folder as read changes, against the configs in force (by local ID, the file stem). A
 * file that does not parse changes nothing: its last good config stays in force. Pure.
 */
export function diffModelConfigs(
  inForce: ReadonlyMap<string, ModelConfigFile>,
  read: readonly ReadConfig[],
): ConfigSetDiff {
  const diff: ConfigSetDiff = { added: [], changed: [], removed: [], kept: [] };
  const seen = new Set<string>();
  for (const r of read) {
    seen.add(r.localId);
    const now = inForce.get(r.localId);
    if (!r.config) {
      if (now) diff.kept.push(r.localId);
      continue;
    }
    const next: ModelConfigFile = { localId: r.localId, file: r.file, config: r.config };
    if (!now) diff.added.push(next);
    else if (now.file !== r.file || canonicalJson(now.config) !== canonicalJson(r.config)) diff.changed.push(next);
  }
  for (const id of inForce.keys()) if (!seen.has(id)) diff.removed.push(id);
  return diff;
}
