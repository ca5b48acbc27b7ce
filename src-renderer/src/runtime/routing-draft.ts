import type { RoutingViewWire, SetRoutingRequest } from '../../../src-router/contract';
import { isMultiSpec, parseMultiSpec } from './multi-spec';
import { appliedStrategy, profileInForce, SETTABLE_PROFILES, strategyButtonFor, writeAccess } from './routing-view';

/**
 * The Routing card's local draft (ROUTE-3, 5, 7), pure: picking a strategy only changes the draft; nothing is
 * published until Apply, and Apply parses first. Server state stays in the `routing` slice; this is UI state.
 * Tested in test/unit/renderer-runtime-routing.test.ts.
 */

export interface RoutingDraft {
  /** Selected strategy button (a strategy `name` from the data), or null when nothing in force matches one. */
  selected: string | null;
  /** The multi (weighted) spec input. */
  multiSpec: string;
  /** The metric profile the operator picked; null = untouched, so `routesEngine` is not sent (ROUTE-5). */
  profile: string | null;
  /** The message shown after Apply (parse failure, the node's 400, or a failed write) and what it concerns. */
  error: { message: string; field: DraftErrorField } | null;
  /** The operator changed something since the draft was last set from the node. */
  dirty: boolean;
}

/** `strategy`, `routesEngine`: that input is invalid; `request`: the write itself failed (gate, network). */
export type DraftErrorField = 'strategy' | 'routesEngine' | 'request';

type View = Pick<
  RoutingViewWire,
  'strategies' | 'multiScorers' | 'effective' | 'desired' | 'defaultMultiSpec' | 'writable' | 'canWrite'
>;

/** From what is in force, falling back to what was requested (ROUTE-7); the multi input holds that spec or the seed. */
export function initialDraft(view: View): RoutingDraft {
  const applied = appliedStrategy(view);
  return {
    selected: strategyButtonFor(applied, view.strategies),
    multiSpec: applied !== null && isMultiSpec(applied) ? applied.trim() : view.defaultMultiSpec,
    profile: null,
    error: null,
    dirty: false,
  };
}

export type DraftAction =
  | { type: 'select'; name: string }
  | { type: 'multi-spec'; text: string }
  | { type: 'profile'; profile: string | null }
  | { type: 'invalid'; message: string; field: DraftErrorField }
  /** A successful Apply: the draft is untouched again and follows the node (next `sync`). */
  | { type: 'applied' }
  /** New server state: an untouched draft follows it; a touched one is kept. */
  | { type: 'sync'; view: View }
  /** Reset, or a successful Apply: back to the applied state. */
  | { type: 'reset'; view: View };

export function draftReducer(draft: RoutingDraft, action: DraftAction): RoutingDraft {
  switch (action.type) {
    case 'select':
      return { ...draft, selected: action.name, error: null, dirty: true };
    case 'multi-spec':
      return { ...draft, multiSpec: action.text, error: null, dirty: true };
    case 'profile':
      return { ...draft, profile: action.profile, error: null, dirty: true };
    case 'invalid':
      return { ...draft, error: { message: action.message, field: action.field } };
    case 'applied':
      return { ...draft, profile: null, error: null, dirty: false };
    case 'sync':
      return draft.dirty ? draft : initialDraft(action.view);
    case 'reset':
      return initialDraft(action.view);
  }
}

/** The strategy string the draft stands for (a multi spec as typed, trimmed), or null with nothing selected. */
export function draftStrategy(draft: RoutingDraft): string | null {
  if (draft.selected === null) return null;
  return draft.selected === 'multi' ? draft.multiSpec.trim() : draft.selected;
}

/** ROUTE-7: Apply only when the draft differs from the applied strategy or a profile was picked (and writes are allowed). */
export function canApply(draft: RoutingDraft, view: View): boolean {
  if (!writeAccess(view).enabled) return false;
  const strategy = draftStrategy(draft);
  if (strategy === null) return false;
  return strategy !== (appliedStrategy(view)?.trim() ?? null) || draft.profile !== null;
}

/** Reset is offered when the draft differs from the applied state in any way. */
export const canReset = (draft: RoutingDraft): boolean => draft.dirty || draft.error !== null;

export type ApplyPlan = { ok: true; request: SetRoutingRequest } | { ok: false; message: string; field: 'strategy' };

/**
 * What Apply does (ROUTE-3, 5): a multi spec is parsed first and its first problem returned instead of a request;
 * `routesEngine` is in the request only when the operator picked a profile.
 */
export function planApply(draft: RoutingDraft, view: View): ApplyPlan {
  let strategy = draftStrategy(draft) ?? '';
  if (draft.selected === 'multi') {
    const parsed = parseMultiSpec(draft.multiSpec, view.multiScorers);
    if (!parsed.ok) return { ok: false, message: parsed.message, field: 'strategy' };
    strategy = parsed.spec;
  }
  return { ok: true, request: draft.profile !== null ? { strategy, routesEngine: draft.profile } : { strategy } };
}

export interface ProfileOption {
  /** `''`: the untouched control (nothing is sent); a profile name: picking it sends `routesEngine`. */
  value: string;
  label: string;
  group: 'in force' | 'set';
}

/**
 * The metric-profile control (ROUTE-5): untouched, it shows the profile in force — effective, falling back to
 * desired, `not reported` when neither — as the option `''`, which sends nothing; the settable profiles follow, and
 * picking one (even the one in force) is the operator's pick, so only then does Apply carry `routesEngine`.
 */
export function profileControl(
  draft: Pick<RoutingDraft, 'profile'>,
  view: Pick<RoutingViewWire, 'effective' | 'desired'>,
): { value: string; options: ProfileOption[] } {
  return {
    value: draft.profile ?? '',
    options: [
      { value: '', label: profileInForce(view), group: 'in force' },
      ...SETTABLE_PROFILES.map((p) => ({ value: p, label: p, group: 'set' as const })),
    ],
  };
}
