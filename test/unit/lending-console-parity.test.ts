import { describe, expect, it } from 'vitest';
import {
  decisionPageSchema,
  decisionRowSchema,
  leaseGrantSchema,
  type NodeModelRecord,
} from '../../src-router/contract';
import {
  borrowedReturnedRow,
  foldRows,
  type GuardianRoutedReason,
  guardianRoutedRow,
  heldForHelperRow,
  type LeaseClearedReason,
  leaseClearedRow,
  leaseRefusedRow,
  leaseUpdatedRow,
  lentRow,
  nativeWaitedBehindBorrowedRow,
  planRowToDecision,
  type ReturnedReason,
  relayRefusedRow,
  returnedRow,
} from '../../src-router/lending/decision-rows';
import { LINK_LANE_PATHS, laneProblem } from '../../src-router/lending/links';
import type { LeaseGrant, SkipReason } from '../../src-router/lending/types';
import { seededRandom } from '../../src-router/seeded-random';
import {
  DECISION_COLUMNS,
  DECISION_FIELDS,
  type DecisionInput,
  type DecisionRow,
  parseJsonLines,
  toJsonLines,
} from '../../src-router/store';

// The renderer folds the decision log (UI-1), names its columns, and knows the link lanes with its own copies of the
// router's rules (it may import only contract/). This keeps the two answering the same. The renderer modules are
// loaded by path: they belong to the web TypeScript project, not this one.

interface Folded {
  row: { nodeId: string; id: number };
  count: number;
  firstAt: number;
  lastAt: number;
}
interface RendererFold {
  foldDecisions(rows: readonly DecisionRow[], opts?: { adjacentOnly?: boolean }): Folded[];
}
interface RendererDecisionView {
  DECISION_FIELDS: string[];
  columnName(field: string): string;
}
interface RendererFilters {
  REASONS: readonly string[];
  EVENTS_BY_KIND: Record<string, readonly string[]>;
}
interface RendererLinks {
  LANES: readonly { lane: 'text' | 'image'; path: string }[];
  fitsLane(capabilities: readonly string[], lane: 'text' | 'image'): boolean;
}
interface RendererClient {
  LINK_PATHS: Record<'text' | 'image', string>;
}

const load = async <T>(rel: string): Promise<T> => (await import(new URL(rel, import.meta.url).pathname)) as T;

const A = { nodeId: 'owner', model: 'a' };
const B = { nodeId: 'helper', model: 'b' };
const C = { nodeId: 'helper2', model: 'c' };

/** One of every row the lending plumbing writes (LOG-2..4). */
function sampleInputs(at: number): DecisionInput[] {
  const plan = (helper: typeof B, outcome: 'granted' | 'probe' | 'skipped', reason: SkipReason | null, slots: number) =>
    planRowToDecision({
      at,
      trigger: 'enqueued',
      linkId: 'l1',
      owner: A,
      helper,
      held: 3,
      backlog: 5,
      ownerDrainMs: 900,
      helperSwitchMs: 0,
      helperServiceMs: 120,
      serviceSource: 'helper',
      helperBusyMs: 0,
      helperIdleMs: 800,
      ownerJobMs: 240,
      helperRestoreMs: outcome === 'granted' ? 0 : null,
      probeDueAt: outcome === 'probe' ? at + 300 : null,
      outcome,
      reason,
      slots,
    });
  const lease = { at, linkId: 'l1', owner: A, helper: B, slots: 2, requestsOut: 1 };
  return [
    plan(B, 'granted', null, 2),
    plan(C, 'granted', null, 1),
    plan(B, 'skipped', 'cost_rejected', 0),
    plan(C, 'probe', 'outranked', 1),
    plan(B, 'skipped', 'outranked', 0),
    leaseUpdatedRow({ ...lease, probe: false, ttlMs: 5000, ownerJobMs: 240, helperJobMs: 100 }),
    leaseClearedRow({ ...lease, reason: 'no_lease' }),
    leaseRefusedRow({ at, linkId: 'l1', owner: A, helper: B, slots: null, requestsOut: 0, reason: 'not_an_owner' }),
    lentRow({ ...lease, requestId: 'r1' }),
    returnedRow({ ...lease, requestId: 'r2', reason: 'own_work_arrived' }),
    heldForHelperRow({
      ...lease,
      requestId: 'r3',
      ownerPredictedFinishMs: 300,
      ownerJobMs: 240,
      helperJobMs: 100,
      waitedMs: 50,
    }),
    relayRefusedRow({
      at,
      linkId: 'l1',
      owner: A,
      helper: B,
      requestId: 'r4',
      reason: 'no_live_lease',
      details: { message: 'no live lease' },
    }),
    nativeWaitedBehindBorrowedRow({ at, model: B, requestId: 'r5', borrowedInBackend: 2, waitedMs: 700 }),
    borrowedReturnedRow({
      at,
      linkId: 'l1',
      owner: A,
      helper: B,
      requestId: 'r6',
      reason: 'busy_on_arrival',
      borrowedInBackend: 1,
    }),
    guardianRoutedRow({ at, model: A, guardian: C, requestId: 'r7', reason: 'detected', from: 'cluster' }),
  ];
}

/** Stored rows as the log answers them: a random mix of repeats and interleavings from two writing nodes. */
function randomLog(seed: number, n: number): DecisionRow[] {
  const rnd = seededRandom(seed);
  const rows: DecisionRow[] = [];
  let at = 1_700_000_000_000;
  for (let i = 0; i < n; i++) {
    at += Math.floor(rnd() * 3) * 7; // ties happen
    const inputs = sampleInputs(at);
    // Repeats are likely: pick among the first few most of the time.
    const input = inputs[Math.floor(rnd() < 0.7 ? rnd() * 3 : rnd() * inputs.length)];
    rows.push({ ...input, id: i + 1, nodeId: rnd() < 0.8 ? 'master' : 'owner', routerVersion: '0.1.0' });
  }
  return rows.reverse(); // newest first, as the log answers
}

const shape = (lines: Folded[]) => lines.map((l) => [l.row.nodeId, l.row.id, l.count, l.firstAt, l.lastAt]);

describe('renderer ↔ router parity of the Lending tab', () => {
  it('folding: the renderer’s lines are the router’s, line for line, for logs of every shape', async () => {
    const r = await load<RendererFold>('../../src-renderer/src/lending/decision-fold.ts');
    let folded = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const rows = randomLog(seed, 1 + (seed % 7) * 9);
      const rnd = seededRandom(seed * 31);
      const shuffled = rows
        .map((row) => ({ row, k: rnd() }))
        .sort((x, y) => x.k - y.k)
        .map((x) => x.row);
      for (const input of [rows, shuffled]) {
        for (const opts of [{}, { adjacentOnly: true }]) {
          const mine = r.foldDecisions(input, opts);
          expect(shape(mine), `seed ${seed} ${JSON.stringify(opts)}`).toEqual(shape(foldRows(input, opts)));
          folded += mine.filter((l) => l.count > 1).length;
        }
      }
    }
    expect(folded).toBeGreaterThan(50); // the cases exercise folding, not only single rows
  });

  it('the row schema has the store’s fields in table order; the renderer names them by the table’s columns', async () => {
    expect(Object.keys(decisionRowSchema.shape)).toEqual(DECISION_FIELDS);
    const v = await load<RendererDecisionView>('../../src-renderer/src/lending/decision-view.ts');
    expect(v.DECISION_FIELDS).toEqual(DECISION_FIELDS);
    for (const f of DECISION_FIELDS) expect(v.columnName(f)).toBe(DECISION_COLUMNS[f]);
  });

  it('every row the lending plumbing writes, as the log answers it (JSON), parses with the contract', () => {
    const rows: DecisionRow[] = sampleInputs(1_700_000_000_000).map((input, i) => ({
      ...input,
      id: i + 1,
      nodeId: 'master',
      routerVersion: '0.1.0',
    }));
    const wire = parseJsonLines(toJsonLines(rows));
    for (const row of wire) expect(decisionRowSchema.safeParse(row).error?.issues ?? [], row.event).toEqual([]);
    expect(decisionPageSchema.parse({ rows: wire, nextCursor: null }).rows).toHaveLength(rows.length);
  });

  it('a lease as the coordinator grants it parses with the contract', () => {
    const grant: Required<LeaseGrant> = {
      linkId: 'l1',
      owner: A,
      helper: B,
      slots: 2,
      ttlMs: 5000,
      probe: false,
      ownerJobMs: 240,
      helperJobMs: 100,
      helperSwitchMs: 0,
      measured: true,
      helperContextsize: 4096,
      helperMultimodal: false,
      helperUrl: 'http://127.0.0.1:9',
    };
    expect(leaseGrantSchema.parse(grant)).toEqual(grant);
    const { helperContextsize: _omitted, helperMultimodal: _none, helperUrl: _url, ...image } = grant;
    expect(
      leaseGrantSchema.parse({ ...image, ownerJobMs: null, helperJobMs: null, helperSwitchMs: null }),
    ).toMatchObject({ linkId: 'l1' });
  });

  it('the reason picker offers every reason the log writes, and the events per kind are the log’s', async () => {
    // A Record over the router's unions: a reason added there fails to compile here until it is listed.
    const reasons: Record<
      SkipReason | ReturnedReason | LeaseClearedReason | GuardianRoutedReason | 'not_an_owner',
      true
    > = {
      owner_unpriced: true,
      switch_unpriced: true,
      service_unpriced: true,
      cost_rejected: true,
      outranked: true,
      helper_not_accepting: true,
      helper_claimed: true,
      load_forbidden: true,
      context_too_small: true,
      restore_unpriced: true,
      helper_recently_busy: true,
      no_live_lease: true,
      helper_unreachable: true,
      forward_failed: true,
      not_an_owner: true,
      no_lease: true,
      ttl_expired: true,
      busy_on_arrival: true,
      own_work_arrived: true,
      no_link: true,
      cut_off: true,
      helper_stalled: true,
      owner_ineligible: true,
      helper_ineligible: true,
      withdrawn: true,
      detected: true,
      engine_refused: true,
    };
    const f = await load<RendererFilters>('../../src-renderer/src/lending/decision-filters.ts');
    expect([...f.REASONS].sort()).toEqual(Object.keys(reasons).sort());
    const written = sampleInputs(0);
    for (const row of written) expect(f.EVENTS_BY_KIND[row.kind], `${row.kind}/${row.event}`).toContain(row.event);
  });

  it('lanes: the renderer’s paths and capability rule are the router’s (LINK-2)', async () => {
    const links = await load<RendererLinks>('../../src-renderer/src/links/links-view.ts');
    const client = await load<RendererClient>('../../src-renderer/src/api/console-client.ts');
    expect(Object.fromEntries(links.LANES.map((l) => [l.lane, l.path]))).toEqual(LINK_LANE_PATHS);
    expect(client.LINK_PATHS).toEqual(LINK_LANE_PATHS);
    const record = (capabilities: string[]): NodeModelRecord => ({
      publicId: 'm',
      localId: 'm',
      backend: 'sim',
      capabilities,
      lane: 'text',
      configHash: 'c',
      modelHash: null,
      contextsize: 4096,
      parallel: 1,
      engine: null,
      available: true,
    });
    const sets = [
      [],
      ['text'],
      ['multimodal'],
      ['image'],
      ['video'],
      ['embedding'],
      ['text', 'image'],
      ['stt'],
      ['chat'],
      ['multimodal', 'video'],
    ];
    for (const caps of sets) {
      for (const lane of ['text', 'image'] as const)
        expect(links.fitsLane(caps, lane), `${caps.join(',')} in ${lane}`).toBe(
          laneProblem(record(caps), lane) === null,
        );
    }
  });
});
