import { describe, expect, it } from 'vitest';
import {
  type HoldLease,
  heldReleaseAt,
  heldReleaseDue,
  helperLentFinishAt,
  holdReleaseReason,
  lentCutoffAt,
  lentCutoffDue,
  type SecondSlotQuery,
  shouldHoldSecondSlot,
} from '../../src-router/lending/holds';

const T = 1_000_000;
/** A measured lease: owner 10 s per job, helper 4 s, no switch, 2 slots. */
const lease = (o: Partial<HoldLease> = {}): HoldLease => ({
  probe: false,
  slots: 2,
  measured: true,
  ownerJobMs: 10_000,
  helperJobMs: 4000,
  helperSwitchMs: 0,
  ...o,
});
/** Owner generating for 2 s (8 s left), both lent slots busy, helper free of them in 3 s. */
const q = (o: Partial<SecondSlotQuery> = {}): SecondSlotQuery => ({
  now: T,
  enabled: true,
  ownerCurrentStartedAt: T - 2000,
  lease: lease(),
  lentOut: 2,
  helperLentFinishAt: T + 3000,
  ...o,
});

describe('shouldHoldSecondSlot (HOLD-1/2)', () => {
  it('holds when the helper finishes it sooner: owner 8 + 10 = 18 s against helper 3 + 4 = 7 s', () => {
    expect(shouldHoldSecondSlot(q())).toEqual({
      hold: true,
      why: 'helper_sooner',
      ownerFinishMs: 18_000,
      helperFinishMs: 7000,
      releaseAt: T + 3000 + 4000,
    });
  });

  it('does not hold when the owner is sooner, or on a tie', () => {
    expect(shouldHoldSecondSlot(q({ helperLentFinishAt: T + 20_000 }))).toMatchObject({
      hold: false,
      why: 'owner_sooner',
      ownerFinishMs: 18_000,
      helperFinishMs: 24_000,
    });
    expect(shouldHoldSecondSlot(q({ helperLentFinishAt: T + 14_000 }))).toMatchObject({
      hold: false,
      why: 'owner_sooner',
      helperFinishMs: 18_000,
    });
  });

  it('an owner job that overran its prediction counts as nothing left, never negative', () => {
    expect(shouldHoldSecondSlot(q({ ownerCurrentStartedAt: T - 60_000, helperLentFinishAt: T + 5000 }))).toMatchObject({
      hold: true,
      ownerFinishMs: 10_000,
      helperFinishMs: 9000,
    });
  });

  it('a helper predicted free already counts only this job', () => {
    expect(shouldHoldSecondSlot(q({ helperLentFinishAt: T - 1000 }))).toMatchObject({
      hold: true,
      helperFinishMs: 4000,
      releaseAt: T + 3000,
    });
    expect(shouldHoldSecondSlot(q({ helperLentFinishAt: null }))).toMatchObject({
      hold: true,
      helperFinishMs: 4000,
      releaseAt: T + 4000,
    });
  });

  it('a helper already past its predicted finish plus one job is not waited for (HOLD-3 would release at once)', () => {
    expect(shouldHoldSecondSlot(q({ helperLentFinishAt: T - 4000 }))).toMatchObject({
      hold: false,
      why: 'helper_overdue',
      releaseAt: null,
    });
  });

  it('never the first slot: an owner not generating takes the request (it never stops generating)', () => {
    expect(shouldHoldSecondSlot(q({ ownerCurrentStartedAt: null }))).toMatchObject({ hold: false, why: 'owner_idle' });
  });

  it('only while every lent slot is busy', () => {
    expect(shouldHoldSecondSlot(q({ lentOut: 1 }))).toMatchObject({ hold: false, why: 'lent_slot_free' });
    expect(shouldHoldSecondSlot(q({ lentOut: 1, lease: lease({ slots: 1 }) })).hold).toBe(true);
  });

  it('never with the setting off, without a live lease, for a probe lease, or without measured speeds on both sides', () => {
    expect(shouldHoldSecondSlot(q({ enabled: false })).why).toBe('disabled');
    expect(shouldHoldSecondSlot(q({ lease: null })).why).toBe('no_lease');
    expect(shouldHoldSecondSlot(q({ lease: lease({ probe: true }) })).why).toBe('probe_lease');
    expect(shouldHoldSecondSlot(q({ lease: lease({ measured: false }) })).why).toBe('unmeasured');
    expect(shouldHoldSecondSlot(q({ lease: lease({ ownerJobMs: null }) })).why).toBe('unmeasured');
    expect(shouldHoldSecondSlot(q({ lease: lease({ helperJobMs: null }) })).why).toBe('unmeasured');
  });
});

describe('helperLentFinishAt', () => {
  it('lent jobs run one at a time in the order sent; the first pays the switch', () => {
    expect(helperLentFinishAt([T, T + 1000], 4000, 0)).toBe(T + 8000);
    expect(helperLentFinishAt([T + 1000, T], 4000, 30_000)).toBe(T + 38_000);
    expect(helperLentFinishAt([T, T + 60_000], 4000, 0)).toBe(T + 64_000);
    expect(helperLentFinishAt([], 4000, 0)).toBeNull();
  });
});

describe('releasing a held request (HOLD-2/3)', () => {
  const keep = (o: Partial<Parameters<typeof holdReleaseReason>[0]> = {}) =>
    holdReleaseReason({ now: T, enabled: true, ownerBusy: true, leaseLive: true, releaseAt: T + 7000, ...o });

  it('keeps waiting while the owner is busy, the lease is live and the helper is within its prediction', () => {
    expect(keep()).toBeNull();
    expect(keep({ now: T + 6999 })).toBeNull();
  });

  it('released when the owner would otherwise idle, the lease clears, or the setting is off', () => {
    expect(keep({ ownerBusy: false })).toBe('owner_idle');
    expect(keep({ leaseLive: false })).toBe('lease_cleared');
    expect(keep({ enabled: false })).toBe('disabled');
  });

  it("HOLD-3: released once the helper took longer than its predicted finish plus one job, on the owner's clock", () => {
    expect(heldReleaseAt(T + 3000, 4000)).toBe(T + 7000);
    expect(heldReleaseDue(T + 6999, T + 7000)).toBe(false);
    expect(heldReleaseDue(T + 7000, T + 7000)).toBe(true);
    expect(keep({ now: T + 7000 })).toBe('helper_overdue');
  });
});

describe('cutting off a silent helper (HOLD-4)', () => {
  it('3 × (predicted switch + job) + 30 s after the request was lent', () => {
    const l = lease({ helperSwitchMs: 20_000, helperJobMs: 4000 });
    expect(lentCutoffAt(T, l)).toBe(T + 3 * 24_000 + 30_000);
    expect(lentCutoffDue(T + 101_999, T, false, l)).toBe(false);
    expect(lentCutoffDue(T + 102_000, T, false, l)).toBe(true);
  });

  it('never once the helper started answering', () => {
    expect(lentCutoffDue(T + 10_000_000, T, true, lease())).toBe(false);
  });

  it('no limit for probes or leases without measured speeds', () => {
    for (const l of [
      lease({ probe: true }),
      lease({ measured: false }),
      lease({ helperJobMs: null }),
      lease({ helperSwitchMs: null }),
      null,
    ]) {
      expect(lentCutoffAt(T, l)).toBeNull();
      expect(lentCutoffDue(T + 10_000_000, T, false, l)).toBe(false);
    }
  });
});
