import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RouterMetrics } from '../../src-router/serve/router-metrics';

// The shipped Grafana dashboard: importable anywhere (the data source is a variable, never a fixed uid), panels with
// unique ids and places, and every metric a query reads is one the router exports (the integration test runs them).
const FILE = join(new URL('../..', import.meta.url).pathname, 'resources', 'grafana', 'routerdesk-dashboard.json');

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}

describe('Grafana dashboard', () => {
  const dash = JSON.parse(readFileSync(FILE, 'utf8')) as {
    uid: string;
    title: string;
    panels: Panel[];
    templating: { list: { name: string; type: string; query: unknown }[] };
  };

  it('takes its Prometheus data source as a variable', () => {
    expect(dash.templating.list.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    for (const p of dash.panels.filter((x) => x.type !== 'row')) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets ?? [])
        expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('has unique panel ids, refIds within a panel, and panels inside the 24-column grid', () => {
    expect(new Set(dash.panels.map((p) => p.id)).size).toBe(dash.panels.length);
    for (const p of dash.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      const refs = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refs).size, p.title).toBe(refs.length);
    }
  });

  it('reads only metrics the router exports', async () => {
    const exported = new Set(
      (
        await new RouterMetrics(
          () => undefined,
          () => undefined,
        ).registry.getMetricsAsJSON()
      ).map((m) => m.name),
    );
    const used = new Set(
      dash.panels.flatMap((p) =>
        (p.targets ?? []).flatMap((t) =>
          [...t.expr.matchAll(/routerdesk_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')),
        ),
      ),
    );
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((n) => !exported.has(n))).toEqual([]);
  });
});
