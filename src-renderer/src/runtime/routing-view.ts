import type { RoutingStrategyInfo, RoutingViewWire } from '../../../src-router/contract';
import { DASH, type PillTone } from '../format';
import { isMultiSpec, parseMultiSpec } from './multi-spec';
import { NOT_REPORTED } from './runtime-format';

/**
 * What the Routing card shows (ROUTE-1, 2, 6, 8), pure, from the `runtime.routing` answer. Desired and effective
 * are never conflated; without a beacon nothing is shown as confirmed. Tested in renderer-runtime-routing.test.ts.
 */

/** The only profile the console can set (ROUTE-5). */
export const SETTABLE_PROFILES = ['clutch-layers'] as const;

export type SyncState = 'in-sync' | 'pending' | 'not-reporting';

export interface SyncPill {
  state: SyncState;
  label: string;
  tone: PillTone;
}

/** ROUTE-6: `engine in sync` (reporting and in sync, or nothing requested), `pending pickup`, `engine not reporting`. */
export function syncPill(view: Pick<RoutingViewWire, 'engineReporting' | 'inSync'>): SyncPill {
  if (!view.engineReporting) return { state: 'not-reporting', label: 'engine not reporting', tone: 'bad' };
  if (view.inSync) return { state: 'in-sync', label: 'engine in sync', tone: 'ok' };
  return { state: 'pending', label: 'pending pickup', tone: 'busy' };
}

export interface StateRow {
  key: 'effective' | 'desired' | 'profile' | 'source';
  label: string;
  value: string;
  mono: boolean;
}

/** The profile in force for static routes: effective, falling back to desired; `not reported` when neither names one. */
export function profileInForce(view: Pick<RoutingViewWire, 'effective' | 'desired'>): string {
  return view.effective?.routes_engine || view.desired?.routes_engine || NOT_REPORTED;
}

const SOURCE_LABEL: Record<string, string> = {
  routing_key: 'routing key',
  config_default: 'config default',
  fallback_invalid_spec: 'fallback: invalid spec',
};

/** The four rows of the seed's table: In force (engine), Requested, Metric profile, Source. */
export function stateRows(view: RoutingViewWire): StateRow[] {
  return [
    {
      key: 'effective',
      label: 'In force (engine)',
      value: view.effective?.strategy ?? DASH,
      mono: view.effective !== null,
    },
    {
      key: 'desired',
      label: 'Requested',
      value: view.desired?.strategy ?? `${DASH} (module default)`,
      mono: view.desired !== null,
    },
    { key: 'profile', label: 'Metric profile', value: profileInForce(view), mono: false },
    {
      key: 'source',
      label: 'Source',
      value: view.effective ? (SOURCE_LABEL[view.effective.source] ?? view.effective.source) : DASH,
      mono: false,
    },
  ];
}

/** Without a beacon (ROUTE-6): where the module would report, and what happens to a strategy published now. */
export function notReportingExplanation(routingKey: string): string {
  return (
    `No live routing module is publishing routing state at ${routingKey}.effective. ` +
    'A strategy published here is stored as desired state and adopted when a module starts polling.'
  );
}

/** The strategy in force, falling back to the one requested (ROUTE-7): what the picker starts from. */
export function appliedStrategy(view: Pick<RoutingViewWire, 'effective' | 'desired'>): string | null {
  return view.effective?.strategy ?? view.desired?.strategy ?? null;
}

/** The strategy button a strategy string selects: `multi` for a multi spec, else the one named (null if unknown). */
export function strategyButtonFor(strategy: string | null, strategies: readonly RoutingStrategyInfo[]): string | null {
  if (strategy === null) return null;
  if (isMultiSpec(strategy)) return strategies.some((s) => s.name === 'multi') ? 'multi' : null;
  return strategies.find((s) => s.name === strategy.trim())?.name ?? null;
}

export interface RequiresHint {
  metrics: string[];
  text: string;
  /** True when the strategy depends on scraped metrics (a warning: it silently falls back to random without them). */
  warn: boolean;
}

/**
 * The metrics a selection needs (ROUTE-2), from the data: a strategy's `requires`; for a multi spec that parses,
 * the union over its scorers' `requires` (else the multi entry's own list).
 */
export function requiredMetrics(
  selected: string,
  multiSpec: string,
  view: Pick<RoutingViewWire, 'strategies' | 'multiScorers'>,
): string[] {
  const info = view.strategies.find((s) => s.name === selected);
  if (!info) return [];
  if (selected !== 'multi') return [...info.requires];
  const parsed = parseMultiSpec(multiSpec, view.multiScorers);
  if (!parsed.ok) return [...info.requires];
  const out: string[] = [];
  for (const pair of parsed.pairs) {
    for (const m of view.strategies.find((s) => s.name === pair.name)?.requires ?? [])
      if (!out.includes(m)) out.push(m);
  }
  return out;
}

export function requiresHint(metrics: readonly string[]): RequiresHint {
  if (metrics.length === 0) {
    return {
      metrics: [],
      warn: false,
      text: 'Needs no scraped metrics: it routes from what the module observes itself (prompt affinity, live in-flight load).',
    };
  }
  return {
    metrics: [...metrics],
    warn: true,
    text:
      `Needs scraped metrics: ${metrics.join(', ')}. Without them the router falls back to a random ready pod, ` +
      'with no error. Confirm they are scraped for the pods you route across.',
  };
}

export interface ProfileNote {
  name: string;
  reads: string[];
  /** Router metrics a scoring strategy needs that the profile cannot fill. */
  missing: string[];
  /** Labels of the strategies that stay cold (a random ready pod) for the profile's pods. */
  cold: string[];
  text: string;
}

/**
 * Per metric profile (ROUTE-4), from the data: which scoring strategies stay cold for its pods because the engine
 * does not publish what they need (llama.cpp: no KV-usage gauge, so least KV cache routes at random there).
 * `multi` is left out: its need depends on the spec, and the requires hint shows it.
 */
export function profileNotes(view: Pick<RoutingViewWire, 'profiles' | 'strategies'>): ProfileNote[] {
  return view.profiles.map((p) => {
    const missing: string[] = [];
    const cold: string[] = [];
    for (const s of view.strategies) {
      if (s.name === 'multi') continue;
      const lacks = s.requires.filter((m) => !p.provides.includes(m));
      if (!lacks.length) continue;
      cold.push(s.label);
      for (const m of lacks) if (!missing.includes(m)) missing.push(m);
    }
    const text = cold.length
      ? `no ${missing.join(', ')} in what it reads: ${cold.join(', ')} stays cold (a random ready pod) for its pods.`
      : 'every scoring strategy can score its pods.';
    return { name: p.name, reads: [...p.reads], missing, cold, text };
  });
}

export interface WriteAccess {
  /** Controls can be used. */
  enabled: boolean;
  /** `Read-only on this deployment` / `Read-only for your account`, or null. */
  banner: string | null;
  /** Tooltip of Apply when writes are off: names the gate. */
  tooltip: string | null;
  /** The name of the gate in force that makes the card read-only (`INFERENCE_DEPLOY_ENABLED`, …), or null. */
  gate: string | null;
}

/** The config keys; the node answers the gate in force (`INFERENCE_DEPLOY_ENABLED` / `INFERENCE_ADMIN_EMAILS` when set). */
export const DEPLOYMENT_GATE = 'console.routing_writes_enabled';
export const OPERATORS_GATE = 'console.operators';

/** ROUTE-8: the deployment gate wins over the account gate; reads keep working either way. */
export function writeAccess(
  view: Pick<RoutingViewWire, 'writable' | 'canWrite'> & { gate?: { deployment: string; operators: string } },
): WriteAccess {
  if (!view.writable) {
    const gate = view.gate?.deployment ?? DEPLOYMENT_GATE;
    return {
      enabled: false,
      banner: 'Read-only on this deployment',
      tooltip: `Routing writes are turned off on this deployment (${gate} is false).`,
      gate,
    };
  }
  if (!view.canWrite) {
    const gate = view.gate?.operators ?? OPERATORS_GATE;
    return {
      enabled: false,
      banner: 'Read-only for your account',
      tooltip: `Only operators (${gate}) can change routing.`,
      gate,
    };
  }
  return { enabled: true, banner: null, tooltip: null, gate: null };
}

/** ROUTE-7's empty state: no strategies (or no answer at all). The detail line says which. */
export const NO_STRATEGIES_MESSAGE =
  'Routing data could not be loaded. Check that routing is enabled on this node, then retry.';
export const NO_STRATEGIES_DETAIL = 'The node returned no routing strategies.';
