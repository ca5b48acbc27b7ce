import { describe, expect, it } from 'vitest';
import {
  createConsoleClient,
  DECISION_PAGE_SIZE,
  type FetchLike,
  fileNameFromDisposition,
  REJECTED_MESSAGE,
} from '../../src-renderer/src/api/console-client';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { DecisionPageWire, DecisionRowWire, LendingViewWire } from '../../src-router/contract';

// The `lending` and `decisions` slices and their console reads (UI-1, UI-2, UI-6), over a scripted fetch.

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const row = (id: number, at = 1_000 + id): DecisionRowWire => ({
  id,
  at,
  nodeId: 'master',
  routerVersion: '0.1.0',
  kind: 'dispatch',
  event: 'lent',
  trigger: null,
  linkId: 'l1',
  ownerNode: 'master',
  ownerModel: 'a',
  helperNode: 'gpu-b',
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
  ownerJobMs: 240,
  helperJobMs: 100,
  waitedMs: null,
  borrowedInBackend: null,
  requestId: `r${id}`,
  details: null,
});
const page = (rows: DecisionRowWire[], nextCursor: string | null): DecisionPageWire => ({ rows, nextCursor });

const lendingView: LendingViewWire = {
  leases: [
    {
      linkId: 'l1',
      owner: { nodeId: 'master', model: 'a' },
      helper: { nodeId: 'gpu-b', model: 'b' },
      slots: 2,
      ttlMs: 5000,
      probe: false,
      ownerJobMs: 247,
      helperJobMs: 107,
      helperSwitchMs: 0,
      measured: true,
      helperContextsize: 4096,
    },
  ],
  decisionsMade: 47,
  settings: { scheduling_backend_depth: 2, offload_hold_for_faster_helper: true },
  nodes: [
    { nodeId: 'master', version: '0.1.0', settingsHash: 'h', inSync: true, linksVersion: 1 },
    { nodeId: 'gpu-b', version: '0.1.0', settingsHash: 'h', inSync: true, healthy: true },
  ],
  held: [
    {
      nodeId: 'master',
      models: [
        {
          model: 'a',
          depth: 2,
          active: [],
          held: [
            {
              id: 'x',
              state: 'queued',
              firstArrival: '2025-01-01T00:00:00.000Z',
              borrowed: false,
              returned: false,
              stream: false,
            },
          ],
        },
      ],
    },
    { nodeId: 'gpu-b', models: [], error: 'timeout' },
  ],
};

/** Answers by path, each path a queue; a function answer sees the URL. */
function setup(answers: Record<string, (Response | Error | ((url: string) => Response))[]>) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    const path = new URL(url).pathname.replace('/router/v1/console/', '');
    const next = answers[path]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${path}`);
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next(url) : next;
  };
  const store = createAppStore(URL_, {
    client: createConsoleClient({ url: URL_, token: TOKEN, fetch }),
    now: () => 42,
  });
  return { store, calls };
}

const params = (url: string) => Object.fromEntries(new URL(url).searchParams);

describe('lending slice', () => {
  it('reads the Lending view with the bearer token and mirrors it as given', async () => {
    const { store, calls } = setup({ lending: [json(200, lendingView)] });
    await store.getState().fetchLending();
    expect(calls[0].url).toBe(`${URL_}/router/v1/console/lending`);
    expect(new Headers(calls[0].init?.headers).get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(store.getState().lending).toEqual({ view: lendingView, loading: false, failure: null, fetchedAt: 42 });
  });

  it('an answer that does not match the contract names the field; a rejected token hides the view', async () => {
    const { store } = setup({
      lending: [json(200, lendingView), json(200, { ...lendingView, leases: [{ linkId: 1 }] }), json(401, {})],
    });
    await store.getState().fetchLending();
    await store.getState().fetchLending();
    expect(store.getState().lending.failure?.kind).toBe('invalid');
    expect(store.getState().lending.failure?.message).toMatch(/^unexpected response from node: leases\.0\./);
    expect(store.getState().lending.view).toEqual(lendingView);
    await store.getState().fetchLending();
    expect(store.getState().lending).toMatchObject({
      view: null,
      failure: { kind: 'rejected', message: REJECTED_MESSAGE },
    });
  });
});

describe('decisions slice', () => {
  it('reads the newest page with the filters and the page size, then older pages with the cursor, appended', async () => {
    const { store, calls } = setup({
      decisions: [json(200, page([row(3), row(2)], 'c1')), json(200, page([row(1)], null))],
    });
    await store.getState().loadDecisions('kind=dispatch&node=master');
    expect(params(calls[0].url)).toEqual({ kind: 'dispatch', node: 'master', limit: String(DECISION_PAGE_SIZE) });
    expect(store.getState().decisions).toMatchObject({
      query: 'kind=dispatch&node=master',
      nextCursor: 'c1',
      pages: 1,
      loading: false,
      fetchedAt: 42,
    });
    await store.getState().loadOlderDecisions();
    expect(params(calls[1].url)).toEqual({
      kind: 'dispatch',
      node: 'master',
      limit: String(DECISION_PAGE_SIZE),
      cursor: 'c1',
    });
    expect(store.getState().decisions.rows?.map((r) => r.id)).toEqual([3, 2, 1]);
    expect(store.getState().decisions).toMatchObject({ nextCursor: null, pages: 2, loadingOlder: false });
    await store.getState().loadOlderDecisions();
    expect(calls).toHaveLength(2); // no cursor: nothing older to read
  });

  it('new filters drop the rows read with the old ones; an older page of the old filters arriving late is dropped', async () => {
    let release!: (r: Response) => void;
    const late = new Promise<Response>((r) => (release = r));
    const calls: string[] = [];
    const fetch: FetchLike = async (url) => {
      calls.push(url);
      if (calls.length === 1) return json(200, page([row(3)], 'c1'));
      if (calls.length === 2) return late;
      return json(200, page([row(9)], null));
    };
    const store = createAppStore(URL_, {
      client: createConsoleClient({ url: URL_, token: TOKEN, fetch }),
      now: () => 1,
    });
    await store.getState().loadDecisions('');
    const older = store.getState().loadOlderDecisions();
    const fresh = store.getState().loadDecisions('kind=plan');
    expect(store.getState().decisions.rows).toBeNull();
    await fresh;
    release(json(200, page([row(1)], null)));
    await older;
    expect(store.getState().decisions.rows?.map((r) => r.id)).toEqual([9]);
    expect(store.getState().decisions).toMatchObject({ query: 'kind=plan', pages: 1, loadingOlder: false });
  });

  it('a failed read keeps the rows shown; a rejected token hides them', async () => {
    const { store } = setup({
      decisions: [json(200, page([row(1)], null)), new Error('connect ECONNREFUSED'), json(401, {})],
    });
    await store.getState().loadDecisions('');
    await store.getState().loadDecisions();
    expect(store.getState().decisions).toMatchObject({ rows: [row(1)], failure: { kind: 'unreachable' } });
    await store.getState().loadDecisions();
    expect(store.getState().decisions).toMatchObject({ rows: null, failure: { kind: 'rejected' } });
  });

  it('the screen refresh re-reads the newest page only while no older page was read', async () => {
    const { store, calls } = setup({
      decisions: [json(200, page([row(2)], 'c1')), json(200, page([row(1)], null)), json(200, page([row(2)], 'c1'))],
      lending: [json(200, lendingView), json(200, lendingView)],
      'cluster/nodes': [json(200, { nodes: [] }), json(200, { nodes: [] })],
      'cluster/models': [json(200, { models: [] }), json(200, { models: [] })],
    });
    await store.getState().refreshLending();
    expect(calls.filter((c) => c.url.includes('/decisions'))).toHaveLength(1);
    await store.getState().loadOlderDecisions();
    await store.getState().refreshLending();
    expect(calls.filter((c) => c.url.includes('/decisions'))).toHaveLength(2);
    expect(store.getState().decisions.rows?.map((r) => r.id)).toEqual([2, 1]);
  });
});

describe('export (UI-6)', () => {
  it('downloads the filtered log with the token: format set, paging dropped, the node’s file name kept', async () => {
    const csv = 'id,at,node_id\r\n1,2,master\r\n';
    const { store, calls } = setup({
      decisions: [json(200, page([], null))],
      'decisions/export': [
        new Response(csv, {
          status: 200,
          headers: {
            'content-type': 'text/csv',
            'content-disposition': 'attachment; filename="offload-decisions-20250102-140307.csv"',
          },
        }),
      ],
    });
    await store.getState().loadDecisions('kind=plan&reason=outranked');
    const result = await store.getState().exportDecisions('csv');
    expect(params(calls[1].url)).toEqual({ kind: 'plan', reason: 'outranked', format: 'csv' });
    expect(new Headers(calls[1].init?.headers).get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.fileName).toBe('offload-decisions-20250102-140307.csv');
    expect(await result.value.blob.text()).toBe(csv);
    expect(store.getState().decisions.exporting).toBe(false);
  });

  it('a refusal is a failure with the node’s message; a missing file name falls back', async () => {
    const { store } = setup({
      'decisions/export': [
        json(400, { error: { message: 'format: csv or jsonl', code: 'invalid_request' } }),
        new Response('{}\n', { status: 200 }),
      ],
    });
    const bad = await store.getState().exportDecisions('jsonl');
    expect(bad).toEqual({
      ok: false,
      failure: { kind: 'http', status: 400, message: 'format: csv or jsonl (HTTP 400)' },
    });
    const good = await store.getState().exportDecisions('jsonl');
    expect(good.ok && good.value.fileName).toBe('offload-decisions.jsonl');
  });

  it('file names from Content-Disposition; anything path-like falls back', () => {
    expect(fileNameFromDisposition('attachment; filename="a.csv"', 'x')).toBe('a.csv');
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''b%20c.jsonl", 'x')).toBe('b c.jsonl');
    expect(fileNameFromDisposition('attachment; filename="../etc/passwd"', 'x')).toBe('x');
    expect(fileNameFromDisposition(null, 'x')).toBe('x');
    expect(fileNameFromDisposition('inline', 'x')).toBe('x');
  });
});
