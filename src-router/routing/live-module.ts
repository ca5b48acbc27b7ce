import { type KeySpace, KeySpaceValueTooLarge } from '../kv/keyspace';
import type { PodSnapshot } from './metrics';
import { validateStrategy } from './multi-spec';
import {
  type AppliedRouting,
  beaconOf,
  buildRoutingView,
  checkSetRouting,
  type DesiredRead,
  type DesiredRouting,
  decideApplied,
  desiredToWrite,
  type EffectiveRouting,
  type RoutingView,
  readDesired,
  type SetRoutingInput,
} from './routing-state';
import {
  createPickState,
  type PickRequest,
  type PickResult,
  type PickState,
  pick,
  STRATEGIES,
  type StrategyInfo,
} from './strategies';

/**
 * The live routing module (ROUTE-6): polls the routing key, applies a changed strategy for the next pick (requests
 * already picked keep their pod), republishes the TTL'd effective beacon on every poll. A keyspace outage never
 * stops routing: the last applied strategy stays, `reporting` goes false, the next poll retries.
 */

export const DEFAULT_ROUTING_KEY = 'clutchcall:inference:routing';

export interface LiveRoutingOptions {
  keyspace: KeySpace;
  routingKey?: string;
  /** The config's `routing.strategy`, used until the routing key says otherwise. */
  defaultStrategy?: string;
  /** Static-route profile when the routing key names none. */
  defaultRoutesEngine?: string | null;
  pollMs?: number;
  /** Beacon TTL; default 3 × pollMs. */
  beaconTtlMs?: number;
  rng?: () => number;
  prefixCapacity?: number;
  now?: () => number;
  strategies?: readonly StrategyInfo[];
  /** Called once when a different strategy or profile is committed (log the decision here). */
  onApplied?: (applied: AppliedRouting, previous: AppliedRouting) => void;
  /** Called on every fallback pick (count it in the router's metrics here). */
  onFallback?: (result: PickResult, request: PickRequest) => void;
}

export interface LiveRoutingStatus {
  routingKey: string;
  desired: DesiredRouting | null;
  effective: EffectiveRouting;
  invalidReason: string | null;
  reporting: boolean;
  lastError: string | null;
  lastPollAt: number | null;
  fallbackCount: number;
}

export class LiveRoutingModule {
  readonly routingKey: string;
  readonly effectiveKey: string;
  readonly pollMs: number;
  readonly beaconTtlMs: number;
  private readonly strategies: readonly StrategyInfo[];
  private readonly configDefault: AppliedRouting;
  private applied: AppliedRouting;
  private desired: DesiredRouting | null = null;
  private reporting = false;
  private lastError: string | null = null;
  private lastPollAt: number | null = null;
  private fallbacks = 0;
  private polling: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  readonly pickState: PickState;

  constructor(private readonly opts: LiveRoutingOptions) {
    this.routingKey = opts.routingKey ?? DEFAULT_ROUTING_KEY;
    this.effectiveKey = `${this.routingKey}.effective`;
    this.pollMs = opts.pollMs ?? 5_000;
    this.beaconTtlMs = opts.beaconTtlMs ?? 3 * this.pollMs;
    this.strategies = opts.strategies ?? STRATEGIES;
    this.now = opts.now ?? Date.now;
    const v = validateStrategy(opts.defaultStrategy ?? 'round-robin', this.strategies);
    if (!v.ok) throw Object.assign(new Error(`routing.strategy: ${v.message}`), { code: 'invalid_config' });
    this.configDefault = {
      strategy: v.strategy,
      routesEngine: opts.defaultRoutesEngine ?? null,
      source: 'config_default',
    };
    this.applied = this.configDefault;
    this.pickState = createPickState({ rng: opts.rng, prefixCapacity: opts.prefixCapacity });
  }

  /** Polls now and then every pollMs (unref'd timer). */
  start(): void {
    if (this.timer) return;
    void this.pollNow();
    this.timer = setInterval(() => void this.pollNow(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One poll: read desired, apply, republish the beacon. Never rejects; concurrent calls share one poll. */
  pollNow(): Promise<void> {
    this.polling ??= this.poll().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async poll(): Promise<void> {
    const { keyspace } = this.opts;
    try {
      const read = await this.readRoutingKey();
      this.desired = read.kind === 'ok' ? read.desired : null;
      this.commit(decideApplied(read, this.applied, this.configDefault, this.strategies));
      await keyspace.set(this.effectiveKey, JSON.stringify(beaconOf(this.applied)), { ttlMs: this.beaconTtlMs });
      this.reporting = true;
      this.lastError = null;
    } catch (err) {
      this.reporting = false;
      this.lastError = (err as Error).message || String(err);
    } finally {
      this.lastPollAt = this.now();
    }
  }

  /** The routing key as read: a value over the keyspace's bound is not read, and counts as invalid with the reason. */
  private async readRoutingKey(): Promise<DesiredRead> {
    const raw = await tooLargeAs(this.opts.keyspace.get(this.routingKey), (err) => err);
    return raw instanceof KeySpaceValueTooLarge ? { kind: 'invalid', message: raw.message } : readDesired(raw);
  }

  private commit(next: AppliedRouting): void {
    const prev = this.applied;
    this.applied = next;
    if (prev.strategy.spec !== next.strategy.spec || prev.routesEngine !== next.routesEngine)
      this.opts.onApplied?.(next, prev);
  }

  /** The routing in force: the strategy the next pick uses, the static-route profile, and its source. */
  current(): AppliedRouting {
    return this.applied;
  }

  /** Picks with the strategy in force; counts fallbacks (ROUTE-2). */
  pick(pods: readonly PodSnapshot[], request: PickRequest = {}): PickResult {
    const result = pick(this.applied.strategy, pods, request, this.pickState);
    if (result.fallback) {
      this.fallbacks += 1;
      this.opts.onFallback?.(result, request);
    }
    return result;
  }

  status(): LiveRoutingStatus {
    return {
      routingKey: this.routingKey,
      desired: this.desired,
      effective: beaconOf(this.applied),
      invalidReason: this.applied.invalidReason ?? null,
      reporting: this.reporting,
      lastError: this.lastError,
      lastPollAt: this.lastPollAt,
      fallbackCount: this.fallbacks,
    };
  }

  /** The `runtime.routing` answer, read from the keyspace as it is now (any node's beacon counts). */
  async routingView(access: { writable: boolean; canWrite: boolean }): Promise<RoutingView> {
    const base = { routingKey: this.routingKey, strategies: this.strategies, ...access };
    try {
      // A value over the bound is shown as none; the status says why the routing key was ignored.
      const [desiredRaw, effectiveRaw] = await Promise.all([
        tooLargeAs(this.opts.keyspace.get(this.routingKey), () => null),
        tooLargeAs(this.opts.keyspace.get(this.effectiveKey), () => null),
      ]);
      return buildRoutingView({ ...base, desiredRaw, effectiveRaw });
    } catch {
      return buildRoutingView({ ...base, desiredRaw: null, effectiveRaw: null, keyspaceReachable: false });
    }
  }

  /**
   * Publishes desired state (ROUTE-3/5): validation failures are values with the exact message; keyspace failures
   * reject (KeySpaceError, code keyspace_unavailable). Gates are the caller's (checkWriteGate). Adopted on the next poll.
   */
  async setRouting(
    input: SetRoutingInput,
  ): Promise<
    { ok: true; desired: DesiredRouting } | { ok: false; field: 'strategy' | 'routesEngine'; message: string }
  > {
    const check = checkSetRouting(input, this.strategies);
    if (!check.ok) return check;
    // A routing key over the bound is replaced whole, as if absent.
    const previous = readDesired(await tooLargeAs(this.opts.keyspace.get(this.routingKey), () => null));
    const desired = desiredToWrite(check, previous);
    await this.opts.keyspace.set(this.routingKey, JSON.stringify(desired));
    return { ok: true, desired };
  }
}

/** A keyspace read whose value over the bound becomes `instead(err)`; any other failure still rejects. */
async function tooLargeAs<T>(
  read: Promise<string | null>,
  instead: (err: KeySpaceValueTooLarge) => T,
): Promise<string | null | T> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof KeySpaceValueTooLarge) return instead(err);
    throw err;
  }
}
