import type { RouterMetricName } from './metrics';
import { DEFAULT_MULTI_SPEC, validateStrategy } from './multi-spec';
import { isProfileName, PROFILES, SETTABLE_ROUTES_ENGINES } from './profiles';
import { MULTI_SCORER_NAMES, type ParsedStrategy, type StrategyInfo } from './strategies';

/**
 * Desired → effective (ROUTE-5/6), pure: reading the routing key, deciding what to apply, the beacon, the
 * `runtime.routing` view, setRouting validation and the write gates. The live module does the IO around it.
 */

/** Desired state as published in the routing key. */
export interface DesiredRouting {
  strategy: string;
  routes_engine?: string | null;
}

export type EffectiveSource = 'routing_key' | 'config_default' | 'fallback_invalid_spec';

/** The beacon at `<routing key>.effective`. */
export interface EffectiveRouting {
  strategy: string;
  routes_engine: string | null;
  source: EffectiveSource;
}

/** What a module applies: the parsed strategy, the static-route profile, and where they came from. */
export interface AppliedRouting {
  strategy: ParsedStrategy;
  routesEngine: string | null;
  source: EffectiveSource;
  /** Why the desired state was not applied (source fallback_invalid_spec). */
  invalidReason?: string;
}

export type DesiredRead =
  | { kind: 'absent' }
  | { kind: 'invalid'; message: string }
  | { kind: 'ok'; desired: DesiredRouting };

/** Reads the routing key's JSON `{"strategy": …, "routes_engine": …}` (shape only; the strategy is validated later). */
export function readDesired(raw: string | null): DesiredRead {
  if (raw === null) return { kind: 'absent' };
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', message: 'the routing key does not hold JSON' };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    return { kind: 'invalid', message: 'the routing key does not hold a JSON object' };
  const { strategy, routes_engine } = v as Record<string, unknown>;
  if (typeof strategy !== 'string') return { kind: 'invalid', message: 'the routing key has no strategy string' };
  if (routes_engine !== undefined && routes_engine !== null && typeof routes_engine !== 'string')
    return { kind: 'invalid', message: 'routes_engine is not a string' };
  return { kind: 'ok', desired: routes_engine === undefined ? { strategy } : { strategy, routes_engine } };
}

/**
 * What to apply given the routing key: nothing published → the config default; a valid desired state → it;
 * an invalid one → keep what is applied now (the last valid, or the config default) with source fallback_invalid_spec.
 */
export function decideApplied(
  read: DesiredRead,
  current: AppliedRouting,
  configDefault: AppliedRouting,
  strategies: readonly StrategyInfo[],
): AppliedRouting {
  if (read.kind === 'absent') return configDefault;
  const fallback = (invalidReason: string): AppliedRouting => ({
    strategy: current.strategy,
    routesEngine: current.routesEngine,
    source: 'fallback_invalid_spec',
    invalidReason,
  });
  if (read.kind === 'invalid') return fallback(read.message);
  const v = validateStrategy(read.desired.strategy, strategies);
  if (!v.ok) return fallback(v.message);
  const engine = read.desired.routes_engine;
  if (engine && !isProfileName(engine)) return fallback(`unknown metric profile "${engine}"`);
  return { strategy: v.strategy, routesEngine: engine || configDefault.routesEngine, source: 'routing_key' };
}

export function beaconOf(applied: AppliedRouting): EffectiveRouting {
  return { strategy: applied.strategy.spec, routes_engine: applied.routesEngine, source: applied.source };
}

const SOURCES: readonly string[] = ['routing_key', 'config_default', 'fallback_invalid_spec'];

/** Reads a beacon; null when absent or not one. */
export function readBeacon(raw: string | null): EffectiveRouting | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as Partial<Record<keyof EffectiveRouting, unknown>> | null;
    if (!v || typeof v.strategy !== 'string' || typeof v.source !== 'string' || !SOURCES.includes(v.source))
      return null;
    return {
      strategy: v.strategy,
      routes_engine: typeof v.routes_engine === 'string' ? v.routes_engine : null,
      source: v.source as EffectiveSource,
    };
  } catch {
    return null;
  }
}

/** Applied matches requested: same strategy text, and the same profile when one was requested. Nothing requested → true. */
export function isInSync(desired: DesiredRouting | null, effective: EffectiveRouting | null): boolean {
  if (!desired) return true;
  if (!effective || effective.strategy.trim() !== desired.strategy.trim()) return false;
  return !desired.routes_engine || desired.routes_engine === effective.routes_engine;
}

export interface RoutingView {
  routingKey: string;
  strategies: { name: string; label: string; requires: RouterMetricName[]; weightable: boolean }[];
  multiScorers: string[];
  /** Every metric profile: what it reads and which router metrics that fills (the card says which strategies stay cold). */
  profiles: { name: string; reads: string[]; provides: RouterMetricName[] }[];
  desired: { strategy: string; routes_engine: string | null } | null;
  effective: EffectiveRouting | null;
  engineReporting: boolean;
  inSync: boolean;
  writable: boolean;
  canWrite: boolean;
  defaultMultiSpec: string;
  /** False when the keyspace could not be read (desired and effective then read null). */
  keyspaceReachable: boolean;
}

export interface ViewInput {
  routingKey: string;
  strategies: readonly StrategyInfo[];
  desiredRaw: string | null;
  effectiveRaw: string | null;
  writable: boolean;
  canWrite: boolean;
  keyspaceReachable?: boolean;
}

/** The `runtime.routing` answer (ROUTE-1, ROUTE-6) from what the keyspace holds. */
export function buildRoutingView(input: ViewInput): RoutingView {
  const read = readDesired(input.desiredRaw);
  const desired =
    read.kind === 'ok' ? { strategy: read.desired.strategy, routes_engine: read.desired.routes_engine ?? null } : null;
  const effective = readBeacon(input.effectiveRaw);
  const weightable = input.strategies.filter((s) => s.weightable).map((s) => s.name);
  return {
    routingKey: input.routingKey,
    strategies: input.strategies.map((s) => ({
      name: s.name,
      label: s.label,
      requires: [...s.requires],
      weightable: s.weightable,
    })),
    multiScorers: weightable.length ? weightable : [...MULTI_SCORER_NAMES],
    profiles: Object.values(PROFILES).map((p) => ({ name: p.name, reads: [...p.reads], provides: [...p.provides] })),
    desired,
    effective,
    engineReporting: effective !== null,
    inSync: isInSync(desired, effective),
    writable: input.writable,
    canWrite: input.canWrite,
    defaultMultiSpec: DEFAULT_MULTI_SPEC,
    keyspaceReachable: input.keyspaceReachable ?? true,
  };
}

/** The gates' config keys; `INFERENCE_DEPLOY_ENABLED` / `INFERENCE_ADMIN_EMAILS` win when set (config/write-gates). */
export const WRITE_GATE = { deployment: 'console.routing_writes_enabled', operators: 'console.operators' } as const;

export interface WriteRefusal {
  code: 'routing_read_only';
  /** The name of the gate in force that refused. */
  gate: string;
  message: string;
}

/** Why a routing write is refused (ROUTE-8), naming the gate in force; null when allowed. The deployment gate wins. */
export function checkWriteGate(
  access: { writable: boolean; canWrite: boolean },
  gate: { deployment: string; operators: string } = WRITE_GATE,
): WriteRefusal | null {
  if (!access.writable)
    return {
      code: 'routing_read_only',
      gate: gate.deployment,
      message: `Read-only on this deployment: routing writes are turned off (${gate.deployment} is false).`,
    };
  if (!access.canWrite)
    return {
      code: 'routing_read_only',
      gate: gate.operators,
      message: `Read-only for your account: only operators (${gate.operators}) can change routing.`,
    };
  return null;
}

export interface SetRoutingInput {
  strategy: string;
  /** Present only when the operator picked a profile (ROUTE-5). */
  routesEngine?: string;
}

export const SET_ROUTING_MESSAGES = {
  routesEngine: (engine: string) =>
    `"${engine}" cannot be set as the metric profile; the console can set only ${SETTABLE_ROUTES_ENGINES.join(', ')}.`,
} as const;

export type SetRoutingCheck =
  | { ok: true; strategy: ParsedStrategy; routesEngine?: string }
  | { ok: false; field: 'strategy' | 'routesEngine'; message: string };

/** Validates a setRouting request exactly as ROUTE-3's table (strategy) and ROUTE-5 (only clutch-layers settable). */
export function checkSetRouting(input: SetRoutingInput, strategies: readonly StrategyInfo[]): SetRoutingCheck {
  const v = validateStrategy(input.strategy, strategies);
  if (!v.ok) return { ok: false, field: 'strategy', message: v.message };
  if (
    input.routesEngine !== undefined &&
    !(SETTABLE_ROUTES_ENGINES as readonly string[]).includes(input.routesEngine)
  ) {
    return { ok: false, field: 'routesEngine', message: SET_ROUTING_MESSAGES.routesEngine(input.routesEngine) };
  }
  return input.routesEngine === undefined
    ? { ok: true, strategy: v.strategy }
    : { ok: true, strategy: v.strategy, routesEngine: input.routesEngine };
}

/**
 * The JSON to write to the routing key: the validated strategy as typed (trimmed), and routes_engine only when
 * the operator picked one; otherwise the profile already requested in the key is carried over untouched.
 */
export function desiredToWrite(
  check: { strategy: ParsedStrategy; routesEngine?: string },
  previous: DesiredRead,
): DesiredRouting {
  if (check.routesEngine !== undefined) return { strategy: check.strategy.spec, routes_engine: check.routesEngine };
  const kept = previous.kind === 'ok' ? previous.desired.routes_engine : undefined;
  return kept ? { strategy: check.strategy.spec, routes_engine: kept } : { strategy: check.strategy.spec };
}
