import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  guardianRoutedRow,
  lentFateRow,
  lentRow,
  nativeWaitedBehindBorrowedRow,
  planRowToDecision,
  relayRefusedRow,
  returnedRow,
} from '../../src-router/lending/decision-rows';
import type { PlanRow } from '../../src-router/lending/types';
import { DECISION_EVENTS } from '../../src-router/serve/decision-metrics';
import { ChildTree, ClosedLabel, MAX_LABEL_LENGTH, OpenLabel } from '../../src-router/serve/metric-labels';
import { RouterMetrics } from '../../src-router/serve/router-metrics';
import { DecisionLogWriter, openStore, queryDecisions } from '../../src-router/store';
import { completeDecision } from '../../src-router/store/decision-log-row';
import { tempDir } from '../support/node-harness';
import { ensurePromtool } from '../support/system-deps';

// The lending metrics: every decision-log row counts once by event and reason (and by owner and helper for the
// lending events); label values are folded so the series stay bounded; the output is Prometheus' text format.
const owner = { nodeId: 'gpu-a', model: 'llama-a' };
const helper = { nodeId: 'gpu-b', model: 'llama-b' };
const pair = 'owner_node="gpu-a",owner_model="llama-a",helper_node="gpu-b",helper_model="llama-b"';
const planRow = (o: Partial<PlanRow> = {}): PlanRow => ({
  at: 1,
  trigger: 'enqueued',
  linkId: 'L1',
  owner,
  helper,
  held: 2,
  backlog: 3,
  ownerDrainMs: 100,
  helperSwitchMs: 0,
  helperServiceMs: 50,
  serviceSource: 'helper',
  helperBusyMs: 0,
  helperIdleMs: 10,
  ownerJobMs: 50,
  helperRestoreMs: 0,
  probeDueAt: null,
  outcome: 'granted',
  reason: null,
  slots: 1,
  ...o,
});
const lease = { at: 1, linkId: 'L1', owner, helper, slots: 1, requestsOut: 0 };

const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('metric label folding', () => {
  it('a closed label keeps its values and folds the rest into other, a missing one into none', () => {
    const l = new ClosedLabel(['granted', 'probe']);
    expect([l.fold('granted'), l.fold('probe'), l.fold('req-123'), l.fold(null), l.fold('')]).toEqual([
      'granted',
      'probe',
      'other',
      'none',
      'none',
    ]);
  });

  it('an open label keeps the first cap names, then folds new ones into other; too long or reserved names too', () => {
    const l = new OpenLabel(2);
    expect([l.fold('a'), l.fold('b'), l.fold('c'), l.fold('a'), l.fold(undefined)]).toEqual([
      'a',
      'b',
      'other',
      'a',
      'none',
    ]);
    const m = new OpenLabel(10);
    expect(m.fold('x'.repeat(MAX_LABEL_LENGTH + 1))).toBe('other');
    expect([m.fold('other'), m.fold('none')]).toEqual(['other', 'other']);
    expect(m.size).toBe(0);
  });

  it('a child tree finds a child by its values, creates it once, and shares one all-other child past its cap', () => {
    const made: Record<string, string>[] = [];
    const t = new ChildTree(['x', 'y'], (labels) => (made.push(labels), { labels }), 2);
    const a = t.get('1', '2');
    expect(t.get('1', '2')).toBe(a);
    expect(t.get('1', '3')).not.toBe(a);
    expect(t.get('9', '9').labels).toEqual({ x: 'other', y: 'other' });
    expect(t.get('8', '8')).toBe(t.get('9', '9'));
    expect(made).toEqual([
      { x: '1', y: '2' },
      { x: '1', y: '3' },
      { x: 'other', y: 'other' },
    ]);
    expect(t.size).toBe(2);
  });
});

describe('decision metrics', () => {
  it('counts each row by kind, event and reason, and the lending events by owner and helper', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    const rows = [
      planRowToDecision(planRow()),
      planRowToDecision(planRow({ outcome: 'skipped', reason: 'cost_rejected' })),
      planRowToDecision(planRow({ outcome: 'skipped', reason: 'cost_rejected' })),
      lentRow({ ...lease, requestId: 'req-1' }),
      lentRow({ ...lease, requestId: 'req-2' }),
      returnedRow({ ...lease, requestId: 'req-2', reason: 'cut_off' }),
      relayRefusedRow({ at: 1, linkId: 'L1', owner, helper, requestId: 'req-3', reason: 'no_live_lease' }),
      lentFateRow({ at: 1, linkId: 'L1', owner, helper, requestId: 'req-4', reason: 'taken_back' }),
      nativeWaitedBehindBorrowedRow({ at: 1, model: helper, requestId: 'req-5', borrowedInBackend: 1, waitedMs: 700 }),
      guardianRoutedRow({
        at: 1,
        model: owner,
        guardian: helper,
        requestId: 'req-6',
        reason: 'detected',
        from: 'model',
      }),
    ];
    for (const r of rows) m.decision(completeDecision(r));
    const text = await m.registry.metrics();
    expect(value(text, 'routerdesk_decisions_total{kind="plan",event="skipped",reason="cost_rejected"}')).toBe(2);
    expect(value(text, 'routerdesk_decisions_total{kind="plan",event="granted",reason="none"}')).toBe(1);
    expect(value(text, 'routerdesk_decisions_total{kind="dispatch",event="lent",reason="none"}')).toBe(2);
    expect(value(text, `routerdesk_lending_plan_rows_total{${pair},outcome="skipped",reason="cost_rejected"}`)).toBe(2);
    expect(value(text, `routerdesk_lending_lent_total{${pair}}`)).toBe(2);
    expect(value(text, `routerdesk_lending_returned_total{${pair},reason="cut_off"}`)).toBe(1);
    expect(value(text, `routerdesk_lending_relay_refused_total{${pair},reason="no_live_lease"}`)).toBe(1);
    expect(value(text, `routerdesk_lending_lent_fates_total{${pair},reason="taken_back"}`)).toBe(1);
    expect(
      value(
        text,
        'routerdesk_guardian_routes_total{model="llama-a",guardian_node="gpu-b",guardian_model="llama-b",reason="detected"}',
      ),
    ).toBe(1);
    expect(value(text, 'routerdesk_lending_native_waited_behind_borrowed_seconds_bucket{le="1",model="llama-b"}')).toBe(
      1,
    );
    expect(
      value(text, 'routerdesk_lending_native_waited_behind_borrowed_seconds_bucket{le="0.5",model="llama-b"}'),
    ).toBe(0);
    expect(value(text, 'routerdesk_lending_native_waited_behind_borrowed_seconds_sum{model="llama-b"}')).toBeCloseTo(
      0.7,
      9,
    );
    // Request ids never become label values.
    expect(text).not.toContain('req-');
  });

  it('starts every (event, reason) pair of the log at zero, and folds an unknown event or reason into other', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    let text = await m.registry.metrics();
    for (const [event, e] of Object.entries(DECISION_EVENTS)) {
      for (const reason of e.reasons)
        expect(
          value(text, `routerdesk_decisions_total{kind="${e.kind}",event="${event}",reason="${reason}"}`),
          `${event}/${reason}`,
        ).toBe(0);
    }
    m.decision(
      completeDecision({
        at: 1,
        kind: 'dispatch',
        event: 'something_new' as never,
        reason: 'a reason from a later build',
      }),
    );
    text = await m.registry.metrics();
    expect(value(text, 'routerdesk_decisions_total{kind="dispatch",event="other",reason="other"}')).toBe(1);
  });

  it('keeps the pair series bounded when a peer sends ever new node and model names', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    for (let i = 0; i < 2_000; i++)
      m.decision(
        completeDecision(
          lentRow({ ...lease, owner: { nodeId: `node-${i}`, model: `model-${i}` }, requestId: `r${i}` }),
        ),
      );
    const text = await m.registry.metrics();
    const lentSeries = text.split('\n').filter((l) => l.startsWith('routerdesk_lending_lent_total{'));
    expect(lentSeries.length).toBeLessThanOrEqual(257);
    const total = lentSeries.reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    expect(total).toBe(2_000);
    expect(lentSeries.some((l) => l.includes('owner_node="other"'))).toBe(true);
  });

  it('the decision-log writer hands the metrics every row it writes: the counts equal the rows written', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, {
      nodeId: 'gpu-a',
      retentionMs: 0,
      autoFlush: false,
      observe: (row) => m.decision(row),
    });
    w.add(lentRow({ ...lease, requestId: 'req-1' }));
    w.add(returnedRow({ ...lease, requestId: 'req-1', reason: 'busy_on_arrival' }));
    w.add({
      at: 2,
      kind: 'dispatch',
      event: 'lent',
      ownerNode: 'gpu-a',
      ownerModel: 'llama-a',
      helperNode: 'gpu-b',
      helperModel: 'llama-b',
      details: '{"x":1}',
    });
    w.flush();
    const text = await m.registry.metrics();
    const logged = queryDecisions(db, { limit: 100 }).rows;
    expect(value(text, `routerdesk_lending_lent_total{${pair}}`)).toBe(logged.filter((r) => r.event === 'lent').length);
    expect(value(text, `routerdesk_lending_returned_total{${pair},reason="busy_on_arrival"}`)).toBe(1);
    db.close();
  });

  it('counts only the rows the writer wrote: none it dropped (queue full, closed) and none before they are written', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, {
      nodeId: 'gpu-a',
      retentionMs: 0,
      autoFlush: false,
      maxQueued: 2,
      observe: (row) => m.decision(row),
    });
    for (let i = 0; i < 3; i++) w.add(lentRow({ ...lease, requestId: `req-${i}` }));
    const lent = `routerdesk_lending_lent_total{${pair}}`;
    expect(value(await m.registry.metrics(), lent), 'queued, not written yet').toBeUndefined();
    w.flush();
    w.close();
    w.add(lentRow({ ...lease, requestId: 'req-late' }));
    expect(w.stats()).toMatchObject({ written: 2, dropped: 2 });
    const text = await m.registry.metrics();
    const logged = queryDecisions(db, { limit: 100 }).rows;
    expect(logged).toHaveLength(2);
    expect(value(text, lent)).toBe(2);
    expect(value(text, 'routerdesk_decisions_total{kind="dispatch",event="lent",reason="none"}')).toBe(2);
    db.close();
  });

  it('names every metric by Prometheus conventions: routerdesk_ prefix, counters _total, histograms in seconds, a help text', async () => {
    const all = await new RouterMetrics(
      () => undefined,
      () => undefined,
    ).registry.getMetricsAsJSON();
    expect(all.length).toBeGreaterThan(30);
    for (const m of all) {
      expect(m.name, m.name).toMatch(/^routerdesk_[a-z][a-z_]*[a-z]$/);
      expect(m.help.length, m.name).toBeGreaterThan(10);
      if (String(m.type) === 'counter') expect(m.name).toMatch(/_total$/);
      else expect(m.name).not.toMatch(/_total$/);
      if (String(m.type) === 'histogram') expect(m.name).toMatch(/_seconds$/);
      expect(m.name, 'no milliseconds: base units').not.toMatch(/_ms$|_millis/);
    }
  });

  it('passes promtool check metrics, with no lending wired and with rows counted', async () => {
    const promtool = ensurePromtool();
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    const check = async () => {
      const r = spawnSync(promtool, ['check', 'metrics'], {
        input: await m.registry.metrics(),
        encoding: 'utf8',
        timeout: 30_000,
      });
      return `${r.status} ${r.stdout}${r.stderr}`.trim();
    };
    expect(await check()).toBe('0');
    m.decision(completeDecision(lentRow({ ...lease, requestId: 'req-1' })));
    m.decision(
      completeDecision(
        nativeWaitedBehindBorrowedRow({ at: 1, model: helper, requestId: null, borrowedInBackend: 1, waitedMs: 20 }),
      ),
    );
    m.request({
      finishedAt: 0,
      nodeId: 'n',
      model: 'm',
      localId: 'm',
      backend: 'sim',
      endpoint: 'chat',
      streamed: false,
      queueWaitMs: 20,
      durationMs: 300,
      outcome: 'ok',
    });
    expect(await check()).toBe('0');
  });
});
