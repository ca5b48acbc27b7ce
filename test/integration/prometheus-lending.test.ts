import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DecisionRowView, type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { LENT_BURST_SLAVES, recordLentBurst } from '../support/lent-burst';
import { eventually } from '../support/node-harness';
import { type PromSample, startPrometheus, type TestPrometheus } from '../support/prometheus';
import { ensurePromtool } from '../support/system-deps';

/**
 * A real Prometheus (Debian's package) scrapes a three-node lending cluster (sim engines) every second through a lent burst: the
 * lending series it stores equal the cluster's decision log, promtool accepts every node's /metrics, and every query
 * of the shipped Grafana dashboard returns series.
 */
const DASHBOARD = join(new URL('../..', import.meta.url).pathname, 'resources', 'grafana', 'routerdesk-dashboard.json');

const countBy = <T>(items: T[], key: (t: T) => string) => {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
};
/** Non-zero samples as `key → value` (a counter's zero start is not a row). */
const nonZero = (samples: PromSample[], key: (m: Record<string, string>) => string) =>
  Object.fromEntries(samples.filter((s) => s.value !== 0).map((s) => [key(s.metric), s.value]));
const none = (v: string | null) => v ?? 'none';

describe('Prometheus scraping a lending cluster', () => {
  let c: LendingCluster;
  let prom: TestPrometheus;
  let rows: DecisionRowView[] = [];

  beforeAll(async () => {
    c = await startLendingCluster({ slaves: LENT_BURST_SLAVES });
    prom = await startPrometheus({ master: c.master.url, owner: c.urls.owner, helper: c.urls.helper }, 1_000);
    await prom.scrapedSince(0);
    await recordLentBurst(c);
    // The burst settles (nothing held, leases run out); then the log and Prometheus' last scrape agree on every
    // event and reason. Each read is taken after the other settled: a row written between them shows as a mismatch
    // and is read again.
    await eventually(
      async () => {
        rows = await c.decisions();
        const since = Date.now();
        await prom.scrapedSince(since);
        const scraped = nonZero(
          await prom.query('sum by (kind, event, reason) (routerdesk_decisions_total)'),
          (m) => `${m.kind}/${m.event}/${m.reason}`,
        );
        const logged = countBy(rows, (r) => `${r.kind}/${r.event}/${none(r.reason)}`);
        const held = await prom.query('sum(routerdesk_lending_queue_requests)');
        const leases = await prom.query(
          'sum(routerdesk_lending_master_leases_in_force) + sum(routerdesk_lending_leases_in_force)',
        );
        // Counters count committed rows: a row still queued in a writer would be in neither count yet.
        const pending = await prom.query('sum(routerdesk_decision_log_pending_rows)');
        if (held[0]?.value !== 0 || leases[0]?.value !== 0 || pending[0]?.value !== 0)
          throw new Error('the burst has not settled yet');
        expect(scraped).toEqual(logged);
        return true;
      },
      { timeoutMs: 90_000, everyMs: 500, what: 'the decision log and the scraped counters to agree' },
    );
  }, 240_000);

  afterAll(async () => {
    await prom?.stop();
    await c?.stop();
  });

  it('the lent counters per owner and helper equal the lent rows of the decision log', async () => {
    const lent = rows.filter((r) => r.event === 'lent');
    expect(lent.length).toBeGreaterThan(0);
    const scraped = nonZero(
      await prom.query('sum by (owner_node, owner_model, helper_node, helper_model) (routerdesk_lending_lent_total)'),
      (m) => `${m.owner_node}/${m.owner_model}>${m.helper_node}/${m.helper_model}`,
    );
    expect(scraped).toEqual(countBy(lent, (r) => `${r.ownerNode}/${r.ownerModel}>${r.helperNode}/${r.helperModel}`));
    // Counted on the owner that lent them, none anywhere else.
    const byNode = nonZero(await prom.query('sum by (instance) (routerdesk_lending_lent_total)'), (m) => m.instance);
    expect(byNode).toEqual({ [new URL(c.urls.owner).host]: lent.length });
  });

  it("the plan counters equal the master's plan rows by outcome and reason; hand-backs and cut-offs equal theirs", async () => {
    const plan = rows.filter((r) => r.kind === 'plan');
    expect(plan.some((r) => r.outcome === 'granted')).toBe(true);
    const scraped = nonZero(
      await prom.query('sum by (outcome, reason, owner_model, helper_model) (routerdesk_lending_plan_rows_total)'),
      (m) => `${m.outcome}/${m.reason}/${m.owner_model}>${m.helper_model}`,
    );
    expect(scraped).toEqual(countBy(plan, (r) => `${r.outcome}/${none(r.reason)}/${r.ownerModel}>${r.helperModel}`));
    const returned = nonZero(await prom.query('sum by (reason) (routerdesk_lending_returned_total)'), (m) => m.reason);
    expect(returned).toEqual(
      countBy(
        rows.filter((r) => r.event === 'returned'),
        (r) => none(r.reason),
      ),
    );
    const cutOff = await prom.query('sum(routerdesk_decisions_total{event="returned",reason="cut_off"})');
    expect(cutOff[0].value).toBe(rows.filter((r) => r.event === 'returned' && r.reason === 'cut_off').length);
    const refused = nonZero(
      await prom.query('sum by (reason) (routerdesk_lending_relay_refused_total)'),
      (m) => m.reason,
    );
    expect(refused).toEqual(
      countBy(
        rows.filter((r) => r.event === 'relay_refused'),
        (r) => none(r.reason),
      ),
    );
  });

  it("exposes the lending gauges on every node: queues per enrolled model, leases, fits, load times, the master's view", async () => {
    const info = await prom.query('routerdesk_node_info');
    expect(Object.fromEntries(info.map((s) => [s.metric.node_id, s.metric.role]))).toEqual({
      master: 'master',
      owner: 'slave',
      helper: 'slave',
    });
    // Settled: every state of each enrolled model's queue is there, at zero.
    const queues = await prom.query('routerdesk_lending_queue_requests');
    expect(new Set(queues.map((s) => s.metric.model))).toEqual(new Set(['a', 'b']));
    expect(queues).toHaveLength(2 * 4 * 2);
    expect(queues.every((s) => s.value === 0)).toBe(true);
    // Leases granted during the burst were scraped on the master and on the owner.
    const masterSlots = await prom.query(
      'max by (owner_node, owner_model, helper_node, helper_model) (max_over_time(routerdesk_lending_master_lease_slots[5m]))',
    );
    expect(masterSlots.map((s) => s.metric)).toContainEqual({
      owner_node: 'owner',
      owner_model: 'a',
      helper_node: 'helper',
      helper_model: 'b',
    });
    expect(masterSlots.every((s) => s.value === 1 || s.value === 2)).toBe(true);
    const ownerSlots = await prom.query(
      'max by (owner_model, helper_node, helper_model) (max_over_time(routerdesk_lending_lease_slots[5m]))',
    );
    expect(ownerSlots.map((s) => s.metric)).toContainEqual({
      owner_model: 'a',
      helper_node: 'helper',
      helper_model: 'b',
    });
    // Both models were warmed past min_samples and loaded: a fit and a load time each.
    for (const name of ['routerdesk_model_fit_base_seconds', 'routerdesk_model_load_seconds']) {
      const figures = await prom.query(`max by (model) (${name})`);
      expect(figures.map((s) => s.metric.model).sort(), name).toEqual(['a', 'b']);
      expect(
        figures.every((s) => s.value > 0),
        name,
      ).toBe(true);
    }
    const decided = nonZero(await prom.query('routerdesk_lending_master_decisions_total'), (m) => m.instance);
    expect(Object.keys(decided)).toEqual([new URL(c.master.url).host]);
    const written = await prom.query('sum(routerdesk_decision_log_rows_total{result="written"})');
    expect(written[0].value).toBe(rows.length);
  });

  it("promtool check metrics accepts every node's /metrics", async () => {
    const promtool = ensurePromtool();
    for (const url of [c.master.url, c.urls.owner, c.urls.helper]) {
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(text).toContain('routerdesk_lending_lent_total');
      const r = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
      expect(`${r.status} ${r.stdout}${r.stderr}`.trim(), url).toBe('0');
    }
  });

  it('every query of the Grafana dashboard returns series', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      templating: { list: { name: string; type: string }[] };
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(15);
    const empty: string[] = [];
    for (const { panel, expr } of exprs) {
      // Grafana's variables as Prometheus takes them: every node, a one-minute rate window.
      const promql = expr.replaceAll('$__rate_interval', '1m').replaceAll('$instance', '.*');
      expect(promql, panel).not.toContain('$');
      if ((await prom.query(promql)).length === 0) empty.push(`${panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });
});
