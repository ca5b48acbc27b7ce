import type { Supervisor } from './supervisor';

/** What a lane held before a run of foreign work (borrowed requests, guardian answers) switched it. */
interface RestorePlan {
  lane: string;
  previous: string;
  timer?: NodeJS.Timeout;
}

export interface LaneRestorerDeps {
  supervisor: Pick<Supervisor, 'adapter' | 'laneStatus' | 'preload'>;
  /** `cluster.offload_restore_delay`: the quiet time before a restore. */
  delayMs: number;
  /** Foreign work the lanes do not show yet (borrowed requests queued or on their way in). */
  busy(): boolean;
  /** Marks the node busy with a load of its own (busy for PROBE-3, not an own request for PRICE-7); returns the end marker. */
  ownBusy(): () => void;
  log: { info(msg: string): void; warn(msg: string): void };
}

/**
 * HELPER-4 and GUARD-3: a lane switched by foreign work — a borrowed request on a helper, a guardian answering for a
 * text-only model — is switched back to what it held before the run once the node has been quiet for the restore
 * delay. A run of foreign work restores what was loaded before its first request; foreign work on either lane starts
 * the quiet period again; a native request cancels every pending restore (its own load decides what is loaded).
 */
export class LaneRestorer {
  private readonly plans = new Map<string, RestorePlan>();
  /** Restores done since start, per lane: reloaded (`ok`) or failed. */
  readonly restores = new Map<string, { ok: number; failed: number }>();

  constructor(private readonly deps: LaneRestorerDeps) {}

  /** Before foreign work loads `localId`: what its lane holds now is what the run restores. */
  remember(localId: string): void {
    const lane = this.deps.supervisor.adapter(localId).lane;
    if (this.plans.has(lane)) return; // a run is under way: keep what was loaded before it started
    const held = this.deps.supervisor.laneStatus().find((l) => l.lane === lane)?.loaded;
    if (held && held !== localId) this.plans.set(lane, { lane, previous: held });
  }

  /** No restore of the lane of `localId` (a link without restore_after_borrow). */
  forget(localId: string): void {
    const lane = this.deps.supervisor.adapter(localId).lane;
    clearTimeout(this.plans.get(lane)?.timer);
    this.plans.delete(lane);
  }

  /** Foreign work arrived, started or ended: every pending restore waits the full delay from now. */
  quietFromNow(): void {
    for (const plan of this.plans.values()) this.schedule(plan);
  }

  /** A native request arrived: no pending restore. */
  cancelAll(): void {
    for (const plan of this.plans.values()) clearTimeout(plan.timer);
    this.plans.clear();
  }

  /** Pending restores: lane → the model it goes back to. */
  pending(): { lane: string; previous: string }[] {
    return [...this.plans.values()].map((p) => ({ lane: p.lane, previous: p.previous }));
  }

  stop(): void {
    this.cancelAll();
  }

  private schedule(plan: RestorePlan) {
    clearTimeout(plan.timer);
    plan.timer = setTimeout(() => void this.tryRestore(plan), this.deps.delayMs);
    plan.timer.unref();
  }

  /** Reload the displaced model once the delay passed with no foreign work and nothing running or waiting on any lane. */
  private async tryRestore(plan: RestorePlan) {
    plan.timer = undefined;
    if (this.plans.get(plan.lane) !== plan) return;
    const lanes = this.deps.supervisor.laneStatus();
    if (this.deps.busy() || lanes.some((l) => l.inflight > 0 || l.queued > 0)) return this.schedule(plan);
    this.plans.delete(plan.lane);
    if (lanes.find((l) => l.lane === plan.lane)?.loaded === plan.previous) return;
    const done = this.deps.ownBusy();
    const counts = this.restores.get(plan.lane) ?? { ok: 0, failed: 0 };
    this.restores.set(plan.lane, counts);
    try {
      await this.deps.supervisor.preload(plan.previous);
      counts.ok++;
      this.deps.log.info(`restored ${plan.previous} after foreign work on the ${plan.lane} lane`);
    } catch (err) {
      counts.failed++;
      this.deps.log.warn(`restore of ${plan.previous} failed: ${(err as Error).message}`);
    } finally {
      done();
    }
  }
}
