import type { EngineView } from '../api/model-config-wire';
import { firstLine } from '../models/model-form';

export interface EngineRow {
  family: string;
  available: boolean;
  version: string | null;
  path: string | null;
  /** Where the binary was found, in words. */
  where: string;
  reason: string;
  howToGet: string | null;
}

const FOUND_IN: Record<string, string> = {
  path: 'found on PATH',
  cache: 'built by the project (engines build)',
  builtin: 'built in',
};

/** Engine discovery as the Runtime screen lists it: available engines first (built-in first), then the missing ones. Pure. */
export function engineRows(engines: readonly EngineView[] | null): EngineRow[] {
  const rows = (engines ?? []).map((e) => ({
    family: e.family,
    available: e.available,
    version: firstLine(e.version) || null,
    path: e.path ?? null,
    where: e.found_in ? (FOUND_IN[e.found_in] ?? e.found_in) : '',
    reason: e.reason ?? (e.available ? '' : 'not found'),
    howToGet: e.how_to_get ?? null,
  }));
  const rank = (r: EngineRow) => (r.available ? (r.where === FOUND_IN.builtin ? 0 : 1) : 2);
  return rows.sort((a, b) => rank(a) - rank(b) || (a.family < b.family ? -1 : a.family > b.family ? 1 : 0));
}
