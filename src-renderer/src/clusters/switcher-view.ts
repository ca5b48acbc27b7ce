import type { ClusterView } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';

/** The cluster switcher and the add-cluster dialog (UI-5): options with their status dot, field errors. Pure. */

export type ClusterDot = 'ok' | 'bad' | 'unknown';

export interface ClusterOption {
  id: string;
  label: string;
  local: boolean;
  selected: boolean;
  dot: ClusterDot;
  /** The dot's tooltip: the last error, else what answers the URL. */
  title: string;
}

function describe(c: ClusterView): string {
  if (c.lastError) return c.lastError;
  const who = [c.role, c.nodeId, c.version && `v${c.version}`].filter(Boolean).join(' · ');
  return c.local ? `this node${who ? ` · ${who}` : ''}` : `${c.url ?? ''}${who ? ` · ${who}` : ''}`;
}

/** Local first, then every profile as the node lists them; a selected id not (yet) listed is kept, dot unknown. */
export function clusterOptions(list: ClusterView[] | null, selected: string): ClusterOption[] {
  const options: ClusterOption[] = (list ?? []).map((c) => ({
    id: c.id,
    label: c.local ? 'local' : c.name,
    local: c.local,
    selected: c.id === selected,
    dot: c.reachable ? 'ok' : 'bad',
    title: describe(c),
  }));
  if (!options.some((o) => o.selected))
    options.unshift({
      id: selected,
      label: selected,
      local: selected === 'local',
      selected: true,
      dot: 'unknown',
      title: 'not read yet',
    });
  return options;
}

export const DOT_LABEL: Record<ClusterDot, string> = { ok: 'reachable', bad: 'unreachable', unknown: 'unknown' };

/**
 * The selected remote cluster cannot be reached: from the switcher's list (the node's last probe) or from the
 * selected cluster's own answers (the proxy's 502/504 naming it). Null when it is reachable or local.
 */
export function clusterProblem(
  list: ClusterView[] | null,
  selected: string,
  lastFailure: ApiFailure | null,
): string | null {
  const view = list?.find((c) => c.id === selected);
  if (view?.local || selected === 'local') return null;
  const name = view?.name ?? selected;
  if (lastFailure?.kind === 'unreachable' && lastFailure.code?.startsWith('cluster_')) return lastFailure.message;
  if (view && !view.reachable)
    return `cluster '${name}' cannot be reached${view.lastError ? `: ${view.lastError}` : ''}`;
  return null;
}

export type ClusterField = 'name' | 'url' | 'token';

export interface AddClusterErrors {
  fields: Partial<Record<ClusterField, string>>;
  /** A refusal that names no field (not an operator, the node unreachable, …). */
  form: string | null;
}

const FIELDS: readonly string[] = ['name', 'url', 'token'];

/** Where the add dialog shows the node's refusal: at the field it named (`param`), else above the buttons. */
export function addClusterErrors(failure: ApiFailure | null): AddClusterErrors {
  if (!failure) return { fields: {}, form: null };
  const field = failure.param?.split('.')[0];
  if (field && FIELDS.includes(field)) return { fields: { [field]: failure.message }, form: null };
  return { fields: {}, form: failure.message };
}

/**
 * The PATCH of the edit dialog: only what changed. A new URL needs the token again (the node never sends the stored
 * token to another address): without one, the token field says so and nothing is sent.
 */
export function editClusterPatch(
  current: { name: string; url: string | null },
  draft: Record<ClusterField, string>,
):
  | { ok: true; patch: { name?: string; url?: string; token?: string } | null }
  | { ok: false; errors: AddClusterErrors } {
  const name = draft.name.trim();
  const url = draft.url.trim();
  const patch = {
    ...(name !== current.name ? { name } : {}),
    ...(url !== (current.url ?? '') ? { url } : {}),
    ...(draft.token ? { token: draft.token } : {}),
  };
  if (patch.url !== undefined && !patch.token)
    return {
      ok: false,
      errors: {
        fields: { token: 'a new URL needs the token again: the stored one is only sent to the URL it was given for' },
        form: null,
      },
    };
  return { ok: true, patch: Object.keys(patch).length ? patch : null };
}
