import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { TIMELINE_DECISION_EVENTS } from '../../src-renderer/src/lending/timeline-events';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import {
  rangeLabel,
  TIMELINE_DECISION_PAGE,
  TIMELINE_RANGES_MS,
  TIMELINE_ROW_LIMIT,
} from '../../src-renderer/src/store/timeline-slice';
import type { DecisionRowWire, TimelinePageWire } from '../../src-router/contract';

// The `timeline` slice: the analytics of every node and the lending rows of the log for the last minutes, over a
// scripted fetch, each answer parsed with its contract schema.

const URL_ = 'http://127.0.0.1:8080';
const NOW = 1_700_000_000_000;
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const decision = (id: number): DecisionRowWire => ({
  id,
  at: NOW - id,
  nodeId: 'owner',
  routerVersion: '0.1.0',
  kind: 'dispatch',
  event: 'lent',
  trigger: null,
  linkId: 'l1',
  ownerNode: 'owner',
  ownerModel: 'a',
  helperNode: 'helper',
  helperModel: 'b',
  held: null,
  backlog: null,
  ownerDrainMs: null,
  helperSwitchMs: null,
  helperServiceMs: null,
  serviceSource: null,
  helperIdleMs: null,
  outcome: null,
  reason: null,
  slots: 2,
  requestsOut: 1,
  ownerPredictedFinishMs: null,
  ownerJobMs: null,
  helperJobMs: null,
  waitedMs: null,
  borrowedInBackend: null,
  requestId: `q${id}`,
  details: null,
});
const timeline = (from: number, to: number): TimelinePageWire => ({
  from,
  to,
  nodes: [{ nodeId: 'owner', requests: [], loads: [], truncated: false }],
});

function setup(answers: Record<string, ((url: string) => Response)[]>) {
  const calls: string[] = [];
  const fetch: FetchLike = async (url) => {
    calls.push(url);
    const next = answers[new URL(url).pathname.replace('/router/v1/console/', '')]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${url}`);
    return next(url);
  };
  return {
    store: createAppStore(URL_, { client: createConsoleClient({ url: URL_, token: 't', fetch }), now: () => NOW }),
    calls,
  };
}
const params = (url: string) => Object.fromEntries(new URL(url).searchParams);

describe('timeline slice', () => {
  it("reads the range's analytics and every page of the lending rows, with the range on both", async () => {
    const range = TIMELINE_RANGES_MS[0];
    const { store, calls } = setup({
      timeline: [(u) => json(200, timeline(Number(params(u).from), Number(params(u).to)))],
      decisions: [
        () => json(200, { rows: [decision(1)], nextCursor: 'c1' }),
        () => json(200, { rows: [decision(2)], nextCursor: null }),
      ],
    });
    await store.getState().loadTimeline();
    const t = store.getState().timeline;
    expect(t.failure).toBeNull();
    expect(t.page).toEqual(timeline(NOW - range, NOW));
    expect(t.decisions.map((d) => d.id)).toEqual([1, 2]);
    expect(t.decisionsCut).toBe(false);
    const [tl] = calls.filter((c) => c.includes('/timeline'));
    expect(params(tl)).toEqual({ from: String(NOW - range), to: String(NOW), limit: String(TIMELINE_ROW_LIMIT) });
    const ds = calls.filter((c) => c.includes('/decisions'));
    expect(params(ds[0])).toEqual({
      from: String(NOW - range),
      to: String(NOW),
      event: TIMELINE_DECISION_EVENTS.join(','),
      limit: String(TIMELINE_DECISION_PAGE),
    });
    expect(params(ds[1]).cursor).toBe('c1');
  });

  it('names its ranges in minutes and hours', () => {
    expect(TIMELINE_RANGES_MS.map(rangeLabel)).toEqual(['5 min', '15 min', '1 h']);
  });

  it('another range is kept; an answer off the contract is an `invalid` failure and the last rows stay', async () => {
    const { store } = setup({
      timeline: [() => json(200, timeline(1, 2)), () => json(200, { from: 1, to: 2, nodes: [{ nodeId: 'x' }] })],
      decisions: [() => json(200, { rows: [], nextCursor: null }), () => json(200, { rows: [], nextCursor: null })],
    });
    await store.getState().loadTimeline(TIMELINE_RANGES_MS[2]);
    await store.getState().loadTimeline();
    const t = store.getState().timeline;
    expect(t.rangeMs).toBe(TIMELINE_RANGES_MS[2]);
    expect(t.failure?.kind).toBe('invalid');
    expect(t.failure?.message).toMatch(/nodes\.0\./);
    expect(t.page).toEqual(timeline(1, 2));
  });
});
