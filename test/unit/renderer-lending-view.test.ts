import { describe, expect, it } from 'vitest';
import { DASH, formatClockMs, formatDateTimeMs, formatMillis, formatModelRef } from '../../src-renderer/src/format';
import {
  columnName,
  DECISION_FIELDS,
  decisionLine,
  decisionSummary,
  decisionVariables,
  eventTone,
  logCountLabel,
} from '../../src-renderer/src/lending/decision-view';
import {
  decisionsMadeLabel,
  leaseRows,
  nodeBuildRows,
  settingRows,
  settingsSync,
} from '../../src-renderer/src/lending/lending-view';
import type { DecisionRowWire, LeaseGrantWire, LendingNodeWire } from '../../src-router/contract';

// What the Lending tab shows (UI-1): decision lines and every variable on expand, live leases, builds, settings.

const T = new Date(2025, 0, 2, 14, 3, 7, 42).getTime();

function row(over: Partial<DecisionRowWire> = {}): DecisionRowWire {
  return {
    id: 7,
    at: T,
    nodeId: 'master',
    routerVersion: '0.1.0',
    kind: 'plan',
    event: 'granted',
    trigger: 'enqueued',
    linkId: 'l1',
    ownerNode: 'owner',
    ownerModel: 'a',
    helperNode: 'helper',
    helperModel: 'b',
    held: 2,
    backlog: 3,
    ownerDrainMs: 741,
    helperSwitchMs: 0,
    helperServiceMs: 98,
    serviceSource: 'helper',
    helperIdleMs: 774,
    outcome: 'granted',
    reason: null,
    slots: 2,
    requestsOut: null,
    ownerPredictedFinishMs: null,
    ownerJobMs: 247,
    helperJobMs: null,
    waitedMs: null,
    borrowedInBackend: null,
    requestId: null,
    details: { helperRestoreMs: 0 },
    ...over,
  };
}

describe('display rules', () => {
  it('durations: ms under a second, one decimal under 10 s, then minutes, hours, days; — when absent', () => {
    expect(
      [0, 0.4, 741, 999.4, 1000, 1234, 9_960, 12_345, 60_000, 185_000, 7_380_000, 1_209_600_000].map(formatMillis),
    ).toEqual([
      '0 ms',
      '0 ms',
      '741 ms',
      '999 ms',
      '1 s',
      '1.2 s',
      '10 s',
      '12 s',
      '1m 0s',
      '3m 5s',
      '2h 3m',
      '14d 0h',
    ]);
    for (const v of [null, undefined, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatMillis(v)).toBe(DASH);
  });

  it('clock with milliseconds, date and time for tooltips; — when absent', () => {
    expect(formatClockMs(T)).toBe('14:03:07.042');
    expect(formatDateTimeMs(T)).toBe('2025-01-02 14:03:07.042');
    expect(formatClockMs(null)).toBe(DASH);
    expect(formatDateTimeMs(Number.NaN)).toBe(DASH);
  });

  it('a model on a node, as the router words it', () => {
    expect(formatModelRef('gpu-b', 'b')).toBe('b on gpu-b');
    expect(formatModelRef(null, null)).toBe(DASH);
    expect(formatModelRef('gpu-b', null)).toBe(`${DASH} on gpu-b`);
  });
});

describe('decision lines', () => {
  it('every column is a variable, in table order, under its column name; empty ones are —; then details', () => {
    const vars = decisionVariables(row());
    const names = vars.map((v) => v.name);
    expect(names.slice(0, DECISION_FIELDS.length - 1)).toEqual(
      DECISION_FIELDS.filter((f) => f !== 'details').map(columnName),
    );
    expect(names).toContain('owner_drain_ms');
    expect(names.at(-1)).toBe('details.helperRestoreMs');
    const by = Object.fromEntries(vars.map((v) => [v.name, v]));
    expect(by.owner_drain_ms).toMatchObject({ value: '741 ms', raw: '741', empty: false });
    expect(by.at).toMatchObject({ value: '2025-01-02 14:03:07.042', raw: String(T) });
    expect(by.reason).toMatchObject({ value: DASH, empty: true });
    expect(by.helper_switch_ms).toMatchObject({ value: '0 ms', empty: false });
    expect(by['details.helperRestoreMs'].value).toBe('0 ms');
    expect(vars.map((v) => v.value).join(' ')).not.toMatch(/NaN|undefined|null/);
  });

  it('no details: one empty `details` variable; details times and nested values are readable', () => {
    expect(decisionVariables(row({ details: null })).at(-1)).toEqual({
      name: 'details',
      value: DASH,
      raw: null,
      empty: true,
    });
    const vars = decisionVariables(row({ details: { probeDueAt: T, message: 'no live lease', extra: { a: 1 } } }));
    const by = Object.fromEntries(vars.map((v) => [v.name, v.value]));
    expect(by['details.probeDueAt']).toBe('2025-01-02 14:03:07.042');
    expect(by['details.message']).toBe('no live lease');
    expect(by['details.extra']).toBe('{"a":1}');
  });

  it('column names are the table’s (snake case)', () => {
    expect(['nodeId', 'routerVersion', 'ownerPredictedFinishMs', 'borrowedInBackend', 'at'].map(columnName)).toEqual([
      'node_id',
      'router_version',
      'owner_predicted_finish_ms',
      'borrowed_in_backend',
      'at',
    ]);
  });

  it('summaries by kind: plan numbers, held_for_helper times, helper waits, dispatch requests out', () => {
    expect(decisionSummary(row())).toBe(
      'trigger enqueued · held 2 · backlog 3 · drain 741 ms · switch 0 ms · service 98 ms (helper) · idle 774 ms',
    );
    const held = row({
      kind: 'dispatch',
      event: 'held_for_helper',
      ownerPredictedFinishMs: 257,
      ownerJobMs: 248,
      helperJobMs: 98,
      waitedMs: 220,
      requestId: 'c738af36-bcd3',
    });
    expect(decisionSummary(held)).toBe(
      'owner finish 257 ms · owner/job 248 ms · helper/job 98 ms · waited 220 ms · request c738af36',
    );
    expect(
      decisionSummary(
        row({ kind: 'helper', event: 'native_waited_behind_borrowed', borrowedInBackend: 2, waitedMs: 1500 }),
      ),
    ).toContain('borrowed in backend 2 · waited 1.5 s');
    expect(decisionSummary(row({ kind: 'dispatch', event: 'lent', requestsOut: 2, requestId: 'abcdef0123' }))).toBe(
      'out 2 · request abcdef01',
    );
    expect(decisionSummary(row({ kind: 'dispatch', event: 'relay_refused', requestsOut: null }))).toBe(DASH);
  });

  it('a folded line: count and span; a single row: neither', () => {
    const folded = decisionLine({ row: row(), count: 8, firstAt: T - 1500, lastAt: T });
    expect(folded).toMatchObject({
      key: 'master:7',
      countLabel: '×8',
      at: '14:03:07.042',
      owner: 'a on owner',
      helper: 'b on helper',
      slots: '2',
      reason: DASH,
      tone: 'ok',
    });
    expect(folded.span).toBe('14:03:05.542 – 14:03:07.042 (1.5 s)');
    const single = decisionLine({
      row: row({ event: 'relay_refused', kind: 'dispatch', reason: 'no_live_lease', slots: null }),
      count: 1,
      firstAt: T,
      lastAt: T,
    });
    expect(single).toMatchObject({ countLabel: '', span: null, reason: 'no_live_lease', slots: DASH, tone: 'bad' });
  });

  it('event tones', () => {
    expect(
      ['granted', 'probe', 'skipped', 'lent', 'relay_refused', 'borrowed_returned', 'something_new'].map(eventTone),
    ).toEqual(['ok', 'busy', 'idle', 'ok', 'bad', 'busy', 'idle']);
  });

  it('row and line counts', () => {
    expect(logCountLabel(23, 9, false)).toBe('23 rows in 9 lines');
    expect(logCountLabel(1, 1, true)).toBe('1 row in 1 line · older rows not loaded yet');
  });
});

describe('live leases, builds and settings', () => {
  const lease = (over: Partial<LeaseGrantWire> = {}): LeaseGrantWire => ({
    linkId: 'l1',
    owner: { nodeId: 'master', model: 'a' },
    helper: { nodeId: 'gpu-b', model: 'b' },
    slots: 2,
    ttlMs: 5000,
    probe: false,
    ownerJobMs: 247,
    helperJobMs: 107.33,
    helperSwitchMs: 0,
    measured: true,
    helperContextsize: 4096,
    ...over,
  });

  it('a lease: pair, slots, ttl, basis and per-job speeds; unmeasured speeds are —', () => {
    expect(leaseRows([lease()])[0]).toMatchObject({
      owner: 'a on master',
      helper: 'b on gpu-b',
      slots: '2',
      ttl: '5 s',
      basis: 'measured',
      tone: 'ok',
      ownerJob: '247 ms',
      helperJob: '107 ms',
      helperSwitch: '0 ms',
      helperContext: '4,096',
    });
    expect(
      leaseRows([
        lease({
          probe: true,
          measured: false,
          ownerJobMs: null,
          helperJobMs: null,
          helperSwitchMs: null,
          helperContextsize: undefined,
        }),
      ])[0],
    ).toMatchObject({
      basis: 'probe',
      tone: 'busy',
      ownerJob: DASH,
      helperJob: DASH,
      helperSwitch: DASH,
      helperContext: DASH,
    });
    expect(leaseRows([lease({ measured: false })])[0].basis).toBe('priced');
  });

  it('decisions made, or not a master', () => {
    expect(decisionsMadeLabel(47)).toBe('47 decisions made');
    expect(decisionsMadeLabel(1)).toBe('1 decision made');
    expect(decisionsMadeLabel(null)).toContain('not a master');
  });

  it('settings sync: the answering node is the reference; others in sync or not; unknown hash not reported', () => {
    const nodes: LendingNodeWire[] = [
      { nodeId: 'master', version: '0.1.0', settingsHash: 'aaaa', inSync: true, linksVersion: 3 },
      { nodeId: 'gpu-a', version: '0.1.0', settingsHash: 'aaaa', inSync: true, healthy: true },
      { nodeId: 'gpu-b', version: '0.0.9', settingsHash: 'bbbb', inSync: false, healthy: false },
      { nodeId: 'gpu-c', version: null, settingsHash: null, inSync: false },
    ];
    expect(
      nodeBuildRows(nodes).map((n) => [n.nodeId, n.build, n.sync.label, n.sync.tone, n.health.label, n.linksVersion]),
    ).toEqual([
      ['master', '0.1.0', 'reference', 'ok', 'this node', '3'],
      ['gpu-a', '0.1.0', "master's settings", 'ok', 'healthy', DASH],
      ['gpu-b', '0.0.9', 'differs from master', 'bad', 'unreachable', DASH],
      ['gpu-c', DASH, 'not reported', 'idle', DASH, DASH],
    ]);
    expect(settingsSync({ inSync: true, settingsHash: 'x' }, false).label).toBe("master's settings");
  });

  it('settings sorted by name: durations as durations, switches on/off, counts as they are', () => {
    const rows = settingRows({
      scheduling_refresh_interval: 400,
      offload_hold_for_faster_helper: true,
      scheduling_min_samples: 2,
      offload_decisions_retention: 1_209_600_000,
      other: null,
    });
    expect(rows.map((r) => [r.key, r.value, r.raw])).toEqual([
      ['offload_decisions_retention', '14d 0h', '1209600000'],
      ['offload_hold_for_faster_helper', 'on', 'true'],
      ['other', DASH, 'null'],
      ['scheduling_min_samples', '2', '2'],
      ['scheduling_refresh_interval', '400 ms', '400'],
    ]);
  });
});
