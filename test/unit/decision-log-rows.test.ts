import { describe, expect, it } from 'vitest';
import {
  borrowedReturnedRow,
  foldRows,
  heldForHelperRow,
  leaseClearedRow,
  leaseRefusedRow,
  leaseUpdatedRow,
  lentRow,
  nativeWaitedBehindBorrowedRow,
  planRowToDecision,
  relayRefusedRow,
  returnedRow,
} from '../../src-router/lending/decision-rows';
import type { PlanRow } from '../../src-router/lending/types';
import {
  csvField,
  DECISION_COLUMNS,
  DECISION_FIELDS,
  type DecisionInput,
  DecisionLogWriter,
  type DecisionRow,
  openStore,
  parseJsonLines,
  queryDecisions,
  toCsv,
  toJsonLines,
} from '../../src-router/store';
import { tempDir } from '../support/node-harness';

const A = { nodeId: 'a', model: 'llama' };
const B = { nodeId: 'b', model: 'llama-b' };

const PLAN: PlanRow = {
  at: 1000,
  trigger: 'enqueued',
  linkId: 'L1',
  owner: A,
  helper: B,
  held: 3,
  backlog: 5,
  ownerDrainMs: 9000.4,
  helperSwitchMs: 2000,
  helperServiceMs: 1500,
  serviceSource: 'owner_fallback',
  helperBusyMs: null,
  helperIdleMs: 12000,
  ownerJobMs: 1800,
  helperRestoreMs: 700,
  probeDueAt: null,
  outcome: 'granted',
  reason: null,
  slots: 2,
};

/** Writes inputs through a real writer and reads them back (newest first). */
function roundTrip(inputs: DecisionInput[]): DecisionRow[] {
  const db = openStore(tempDir());
  const w = new DecisionLogWriter(db, { nodeId: 'n1', routerVersion: '1.2.3', retentionMs: 0, autoFlush: false });
  for (const i of inputs) w.add(i);
  w.close();
  return queryDecisions(db, { limit: 1000 }).rows;
}

function row(over: Partial<DecisionRow>): DecisionRow {
  return { ...planRowToDecision(PLAN), id: 1, nodeId: 'n1', routerVersion: '1.2.3', ...over };
}

describe('decision rows from lending values', () => {
  it('maps a plan row to every LOG-2 column, extras in details', () => {
    const d = planRowToDecision(PLAN);
    expect(d).toMatchObject({
      kind: 'plan',
      event: 'granted',
      outcome: 'granted',
      trigger: 'enqueued',
      linkId: 'L1',
      ownerNode: 'a',
      ownerModel: 'llama',
      helperNode: 'b',
      helperModel: 'llama-b',
      held: 3,
      backlog: 5,
      ownerDrainMs: 9000.4,
      helperSwitchMs: 2000,
      helperServiceMs: 1500,
      serviceSource: 'owner_fallback',
      helperIdleMs: 12000,
      ownerJobMs: 1800,
      reason: null,
      slots: 2,
      details: { helperRestoreMs: 700 },
    });
    const [stored] = roundTrip([d]);
    expect(stored).toEqual({ ...d, id: 1, nodeId: 'n1', routerVersion: '1.2.3', ownerDrainMs: 9000 });
    expect(
      planRowToDecision({ ...PLAN, outcome: 'skipped', reason: 'helper_claimed', helperRestoreMs: null, slots: 0 }),
    ).toMatchObject({ event: 'skipped', reason: 'helper_claimed', details: null });
  });

  it('builds every dispatch and helper event with its columns', () => {
    const common = { at: 2000, linkId: 'L1', owner: A, helper: B, slots: 2, requestsOut: 1 };
    const rows = [
      leaseUpdatedRow({ ...common, probe: false, ttlMs: 30000, ownerJobMs: 1800, helperJobMs: 900 }),
      leaseClearedRow({ ...common, reason: 'ttl_expired' }),
      leaseRefusedRow({
        at: 2000,
        linkId: 'L1',
        owner: A,
        helper: B,
        slots: 1,
        requestsOut: 1,
        reason: 'not_an_owner',
      }),
      lentRow({ ...common, requestId: 'r1' }),
      returnedRow({ ...common, requestId: 'r1', reason: 'busy_on_arrival' }),
      heldForHelperRow({
        ...common,
        requestId: 'r2',
        ownerPredictedFinishMs: 3600,
        ownerJobMs: 1800,
        helperJobMs: 900,
        waitedMs: 250,
      }),
      relayRefusedRow({
        at: 2000,
        linkId: null,
        owner: A,
        helper: null,
        requestId: 'r3',
        reason: 'helper_unreachable',
      }),
      nativeWaitedBehindBorrowedRow({ at: 2000, model: B, requestId: 'r4', borrowedInBackend: 2, waitedMs: 1234 }),
      borrowedReturnedRow({
        at: 2000,
        linkId: 'L1',
        owner: A,
        helper: B,
        requestId: 'r5',
        reason: 'own_work_arrived',
        borrowedInBackend: 1,
      }),
    ];
    for (const r of rows)
      expect(Object.keys(r).sort()).toEqual(
        DECISION_FIELDS.filter((f) => f !== 'id' && f !== 'nodeId' && f !== 'routerVersion').sort(),
      );
    expect(rows.map((r) => [r.kind, r.event, r.reason])).toEqual([
      ['dispatch', 'lease_updated', null],
      ['dispatch', 'lease_cleared', 'ttl_expired'],
      ['dispatch', 'lease_refused', 'not_an_owner'],
      ['dispatch', 'lent', null],
      ['dispatch', 'returned', 'busy_on_arrival'],
      ['dispatch', 'held_for_helper', null],
      ['dispatch', 'relay_refused', 'helper_unreachable'],
      ['helper', 'native_waited_behind_borrowed', null],
      ['helper', 'borrowed_returned', 'own_work_arrived'],
    ]);
    expect(rows[0]).toMatchObject({
      slots: 2,
      requestsOut: 1,
      ownerJobMs: 1800,
      helperJobMs: 900,
      details: { probe: false, ttlMs: 30000 },
    });
    expect(rows[2]).toMatchObject({ requestsOut: 1, slots: 1 });
    expect(rows[5]).toMatchObject({
      ownerPredictedFinishMs: 3600,
      ownerJobMs: 1800,
      helperJobMs: 900,
      waitedMs: 250,
      requestId: 'r2',
      helperNode: 'b',
    });
    expect(rows[6]).toMatchObject({ ownerNode: 'a', helperNode: null, requestId: 'r3' });
    expect(rows[7]).toMatchObject({
      helperNode: 'b',
      helperModel: 'llama-b',
      ownerNode: null,
      borrowedInBackend: 2,
      waitedMs: 1234,
    });
    const stored = roundTrip(rows).toReversed();
    stored.forEach((s, i) => expect(s).toEqual({ ...rows[i], id: i + 1, nodeId: 'n1', routerVersion: '1.2.3' }));
  });
});

describe('folding for the Lending tab', () => {
  it('folds consecutive repeats into one line with a count and time span', () => {
    const rows = [
      row({ id: 5, at: 500 }),
      row({ id: 4, at: 400 }),
      row({ id: 3, at: 300, reason: 'outranked', event: 'skipped', outcome: 'skipped' }),
      row({ id: 2, at: 200 }),
      row({ id: 1, at: 100 }),
    ];
    const folded = foldRows(rows);
    expect(folded.map((f) => [f.row.id, f.count, f.firstAt, f.lastAt])).toEqual([
      [5, 2, 400, 500],
      [3, 1, 300, 300],
      [2, 2, 100, 200],
    ]);
  });

  it('folds each pair of interleaved plan rows, and splits on node, slots or helper', () => {
    const C = { helperNode: 'c', helperModel: 'qwen' };
    const rows = [
      row({ id: 6, at: 600 }),
      row({ id: 5, at: 600, ...C }),
      row({ id: 4, at: 500 }),
      row({ id: 3, at: 500, ...C }),
      row({ id: 2, at: 400, slots: 1 }),
      row({ id: 1, at: 400, nodeId: 'n2' }),
    ];
    expect(foldRows(rows).map((f) => [f.row.id, f.count])).toEqual([
      [6, 2],
      [5, 2],
      [2, 1],
      [1, 1],
    ]);
    expect(foldRows(rows, { adjacentOnly: true }).map((f) => f.count)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(foldRows([])).toEqual([]);
  });

  it('folds rows that differ only in trigger, request or timing values', () => {
    const rows = [
      row({ id: 2, at: 20, trigger: 'tick', helperIdleMs: 1 }),
      row({ id: 1, at: 10, trigger: 'completed', requestId: 'x' }),
    ];
    expect(foldRows(rows)).toEqual([{ row: rows[0], count: 2, firstAt: 10, lastAt: 20 }]);
  });
});

describe('exports', () => {
  const tricky = row({
    id: 7,
    requestId: 'a,b "quoted"\nnext line',
    reason: 'x\r\ny',
    details: { note: 'comma, "quote"', n: [1, 2] },
  });

  it('writes CSV with a header of every column and RFC 4180 quoting', () => {
    const csv = toCsv([row({}), tricky]);
    const header = csv.slice(0, csv.indexOf('\r\n'));
    expect(header.split(',')).toEqual(Object.values(DECISION_COLUMNS));
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(csv).toContain('"a,b ""quoted""\nnext line"');
    expect(csv).toContain('"x\r\ny"');
    expect(csv).toContain(csvField(JSON.stringify(tricky.details)));
    expect(csvField('plain')).toBe('plain');
    expect(csvField('"')).toBe('""""');
    expect(parseCsv(csv)[2][DECISION_FIELDS.indexOf('requestId')]).toBe(tricky.requestId);
    expect(parseCsv(csv)[1][DECISION_FIELDS.indexOf('trigger')]).toBe('enqueued');
    expect(parseCsv(csv)[1][DECISION_FIELDS.indexOf('reason')]).toBe('');
    expect(parseCsv(toCsv([]))).toEqual([Object.values(DECISION_COLUMNS)]);
  });

  it('round-trips JSON lines', () => {
    const rows = [row({}), tricky, row({ id: 8, details: null, helperNode: null })];
    const text = toJsonLines(rows);
    expect(text.split('\n')).toHaveLength(4);
    expect(parseJsonLines(text)).toEqual(rows);
    expect(() => parseJsonLines('[1]\n')).toThrow(/line 1/);
  });
});

/** A minimal RFC 4180 reader, to check the writer's quoting independently. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let rec: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') rec.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') rec.push(field), records.push(rec), (rec = []), (field = ''), i++;
    else field += ch;
  }
  return records;
}
