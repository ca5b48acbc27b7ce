/**
 * planner-scale: the pure lease planner `plan()` on synthetic cluster snapshots of 2, 10, 50 and 200 nodes. Every
 * node has one text model and links to up to 3 neighbours (ring order); even nodes are busy owners with held work,
 * odd nodes idle helpers, some helpers already claimed by a live lease. Reports decisions (plan calls) per second,
 * µs per decision and µs per evaluated link (plan row), the last as a ratio to the 2-node case.
 */
import { plan } from '../lending/planner';
import type { CostFit, LinkSpec, LiveLease, ModelState, NodeState, PlanInput } from '../lending/types';
import { seededRandom } from '../seeded-random';
import { type Cell, formatNumber, formatRatio, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const SIZES = [2, 10, 50, 200];
const NEIGHBOURS = 3;
const NOW = 1_700_000_000_000;

const fit = (ms: number): CostFit => ({
  kind: 'scaled',
  interceptMs: ms * 0.2,
  slopeMsPerWork: (ms * 0.8) / 256,
  samples: 20,
});

/** A snapshot of `n` nodes; `variant` changes held counts, idle times and prices (same shape). */
export function syntheticSnapshot(n: number, variant: number): PlanInput {
  const rand = seededRandom(n * 7919 + variant);
  const nodes: NodeState[] = [];
  for (let i = 0; i < n; i++) {
    const owner = i % 2 === 0;
    const held = owner ? 2 + Math.floor(rand() * 10) : 0;
    const model: ModelState = {
      model: `m${i}`,
      lane: 'text',
      loaded: rand() < 0.8,
      held,
      heldWork: Array.from({ length: held }, () => 128 + Math.floor(rand() * 384)),
      active: owner ? 2 : 0,
      lentOut: 0,
      fit: rand() < 0.9 ? fit(200 + rand() * 800) : null,
      loadMs: rand() < 0.9 ? 500 + rand() * 3000 : null,
      contextsize: 4096,
      eligible: true,
      multimodal: false,
      meanHeldTokens: owner ? 300 : null,
    };
    nodes.push({
      nodeId: `node-${String(i).padStart(3, '0')}`,
      reachable: rand() > 0.02,
      acceptsBorrowed: !owner,
      ownIdleMs: owner ? 0 : Math.floor(rand() * 20_000),
      sinceOwnRequestMs: owner ? 10 : Math.floor(rand() * 60_000),
      lanes: { text: model.loaded ? model.model : `other-${i}` },
      borrowedInFlight: 0,
      models: [
        model,
        {
          ...model,
          model: `other-${i}`,
          loaded: !model.loaded,
          held: 0,
          heldWork: [],
          active: 0,
          meanHeldTokens: null,
        },
      ],
    });
  }
  const links: LinkSpec[] = [];
  for (let i = 0; i < n; i++) {
    for (let k = 1; k <= Math.min(NEIGHBOURS, n - 1); k++) {
      const j = (i + k) % n;
      links.push({
        id: `L-${i}-${j}`,
        lane: 'text',
        owner: { nodeId: nodes[i].nodeId, model: `m${i}` },
        helper: { nodeId: nodes[j].nodeId, model: `m${j}` },
        loadIfUnloaded: rand() < 0.7,
        restoreAfterBorrow: rand() < 0.5,
      });
    }
  }
  // A tenth of the helpers are already claimed by an earlier lease.
  const live: LiveLease[] = links
    .filter((_, x) => x % 10 === 3)
    .map((l) => ({ owner: l.owner, helper: l.helper, slots: 1, probe: false, expiresAt: NOW + 30_000 }));
  return {
    now: NOW,
    trigger: 'enqueued',
    links,
    nodes,
    live,
    settings: { probeIdleMs: 5000, switchProbeFactor: 12, leaseTtlMs: 30_000 },
  };
}

interface Measured {
  nodes: number;
  links: number;
  rows: number;
  leases: number;
  decisions: number;
  elapsedMs: number;
}

function measure(n: number, budgetMs: number): Measured {
  const inputs = Array.from({ length: 8 }, (_, v) => syntheticSnapshot(n, v));
  let sink = 0;
  // Warm-up: let the JIT settle on this size.
  for (const until = performance.now() + budgetMs / 4; performance.now() < until; )
    for (const i of inputs) sink += plan(i).rows.length;
  let decisions = 0;
  let rows = 0;
  let leases = 0;
  const t0 = performance.now();
  const until = t0 + budgetMs;
  let now = t0;
  // Bounded: at most 5 million decisions whatever the clock says.
  while (now < until && decisions < 5_000_000) {
    for (const i of inputs) {
      const r = plan(i);
      rows += r.rows.length;
      leases += r.leases.length;
    }
    decisions += inputs.length;
    now = performance.now();
  }
  if (sink < 0) throw new Error('unreachable');
  return { nodes: n, links: inputs[0].links.length, rows, leases, decisions, elapsedMs: now - t0 };
}

export const plannerScale: Benchmark = {
  name: 'planner-scale',
  about: 'the pure lease planner plan() on synthetic snapshots of 2 to 200 nodes',
  async run(o: BenchOptions): Promise<BenchResult> {
    const budgetMs = o.quick ? 400 : 2000;
    const results: Measured[] = [];
    for (const n of SIZES) {
      results.push(measure(n, budgetMs));
      o.log(`planner-scale: ${n} nodes done`);
      await new Promise((r) => setImmediate(r));
    }
    const perRow = (m: Measured) => (m.elapsedMs * 1000) / m.rows;
    const base = perRow(results[0]);
    const rows: Cell[][] = results.map((m) => [
      m.nodes,
      m.links,
      formatNumber(m.rows / m.decisions, 1),
      formatNumber(m.leases / m.decisions, 1),
      m.decisions,
      formatNumber(m.decisions / (m.elapsedMs / 1000), 0),
      formatNumber((m.elapsedMs * 1000) / m.decisions, 2),
      formatNumber(perRow(m), 3),
      formatRatio(ratio(perRow(m), base)),
    ]);
    const largest = results[results.length - 1];
    return {
      tables: [
        {
          title: `planner-scale: plan() on synthetic snapshots (each node links to ${NEIGHBOURS} neighbours; even nodes own held work), ${budgetMs} ms per size`,
          columns: [
            'nodes',
            'links',
            'rows/decision',
            'leases/decision',
            'decisions',
            'decisions/s',
            'µs/decision',
            'µs/link',
            'µs/link ÷ 2 nodes',
          ],
          rows,
          notes: [
            'a decision is one plan() call over the whole snapshot; a link evaluated is one plan row;',
            'the last column is the cost per link relative to the 2-node snapshot (1.00× = linear in links).',
          ],
        },
      ],
      summary: [
        {
          benchmark: 'planner-scale',
          measure: `µs per decision, ${largest.nodes} nodes / ${largest.links} links`,
          value: formatNumber((largest.elapsedMs * 1000) / largest.decisions, 1),
          ratio: ratio(perRow(largest), base),
          against: 'µs per link at 2 nodes',
        },
      ],
    };
  },
};
