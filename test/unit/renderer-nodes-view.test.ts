import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ApiResult, ConsoleClient } from '../../src-renderer/src/api/console-client';
import { NodesPage } from '../../src-renderer/src/components/nodes/nodes-page';
import { DASH } from '../../src-renderer/src/format';
import { activeRows, heldSummary, nodeCards, requestRows } from '../../src-renderer/src/nodes/nodes-view';
import { SCREENS, screenFromHash } from '../../src-renderer/src/screens';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import { AppStoreContext } from '../../src-renderer/src/store/use-app-store';
import {
  type ActiveNodeWire,
  type ClusterNodeView,
  type HeldItemWire,
  type HeldNodeWire,
  type LendingViewWire,
  lendingViewSchema,
} from '../../src-router/contract';

// The Nodes page (UI-2): health, build, settings sync, active requests, held requests marked queued / held / lent
// with the first-arrival time; a request at a backend only under active requests.

const T0 = Date.UTC(2025, 0, 2, 12, 0, 0, 0);
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const item = (
  id: string,
  state: HeldItemWire['state'],
  atMs: number,
  over: Partial<HeldItemWire> = {},
): HeldItemWire => ({
  id,
  state,
  firstArrival: iso(atMs),
  borrowed: false,
  returned: false,
  stream: false,
  ...over,
});

const node = (over: Partial<ClusterNodeView>): ClusterNodeView => ({
  nodeId: 'master',
  url: null,
  role: 'master',
  local: true,
  healthy: true,
  lastSeen: iso(0),
  lastError: null,
  version: '0.1.0',
  settingsHash: 'aaaa',
  models: 1,
  ...over,
});

const ownerHeld: HeldNodeWire = {
  nodeId: 'master',
  models: [
    {
      model: 'a',
      depth: 2,
      active: [item('active-2', 'active', 200), item('active-1', 'active', 100)],
      held: [
        item('lent-1', 'lent', 300),
        item('queued-1', 'queued', 150, { returned: true }),
        item('held-1', 'held', 400),
        item('stray', 'active', 50),
      ],
    },
  ],
};

const lending = (held: HeldNodeWire[], over: Partial<LendingViewWire> = {}): LendingViewWire => ({
  leases: [],
  decisionsMade: 3,
  settings: {},
  nodes: [
    { nodeId: 'master', version: '0.1.0', settingsHash: 'aaaa', inSync: true, linksVersion: 1 },
    { nodeId: 'gpu-b', version: '0.1.0', settingsHash: 'bbbb', inSync: false, healthy: true },
  ],
  held,
  ...over,
});

describe('requests of a node', () => {
  it('held: queued / held / lent by first arrival; active: at a backend, whichever list sent it', () => {
    const { active, held } = requestRows(ownerHeld, T0 + 1_400);
    expect(active.map((r) => [r.id, r.state])).toEqual([
      ['stray', 'active'],
      ['active-1', 'active'],
      ['active-2', 'active'],
    ]);
    expect(held.map((r) => [r.id, r.state, r.tone])).toEqual([
      ['queued-1', 'queued', 'idle'],
      ['lent-1', 'lent', 'ok'],
      ['held-1', 'held', 'busy'],
    ]);
    expect(held.every((r) => r.state !== 'active')).toBe(true);
  });

  it('each keeps its first arrival (with ms) and its age; flags as tags', () => {
    const { held } = requestRows(ownerHeld, T0 + 1_400);
    const returned = held[0];
    expect(returned.firstArrivalTitle).toBe(iso(150));
    expect(returned.firstArrival).toMatch(/^\d{2}:\d{2}:\d{2}\.150$/);
    expect(returned.age).toBe('1.3 s');
    expect(returned.tags).toEqual(['returned']);
    expect(returned.shortId).toBe('queued-1');
    const borrowed = requestRows(
      {
        nodeId: 'h',
        models: [
          {
            model: 'b',
            depth: 2,
            active: [item('0123456789abcdef', 'active', 0, { borrowed: true, stream: true })],
            held: [],
          },
        ],
      },
      T0,
    ).active[0];
    expect(borrowed).toMatchObject({ shortId: '01234567', tags: ['borrowed', 'stream'], age: '0 ms', model: 'b' });
  });

  it('an unreadable arrival shows —, never NaN; a node with no queues has no rows', () => {
    const bad = requestRows(
      {
        nodeId: 'x',
        models: [{ model: 'a', depth: 2, active: [], held: [{ ...item('q', 'queued', 0), firstArrival: 'soon' }] }],
      },
      T0,
    );
    expect(bad.held[0]).toMatchObject({ firstArrival: DASH, age: DASH });
    expect(requestRows(undefined, T0)).toEqual({ active: [], held: [] });
  });

  it('issue #15: position and predicted start and finish of a waiting request; helper and predicted finish of a lent one', () => {
    const view: HeldNodeWire = {
      nodeId: 'master',
      models: [
        {
          model: 'a',
          depth: 2,
          active: [],
          held: [
            item('q1', 'queued', 100, {
              position: 1,
              predictedStart: iso(1_500),
              predictedFinish: iso(3_600),
              helper: null,
            }),
            item('q2', 'queued', 200, { position: 2, predictedStart: null, predictedFinish: null, helper: null }),
            item('l1', 'lent', 50, {
              position: null,
              predictedStart: null,
              predictedFinish: iso(900),
              helper: 'gpu-b/b',
            }),
          ],
        },
      ],
    };
    const [lent, first, second] = requestRows(view, T0 + 1_000).held;
    expect(first).toMatchObject({
      position: '1',
      predictedStart: 'in 500 ms',
      predictedFinish: 'in 2.6 s',
      helper: DASH,
    });
    expect(first.predictedStartTitle).toContain(iso(1_500));
    expect(second).toMatchObject({ position: '2', predictedStart: DASH, predictedFinish: DASH });
    expect(second.predictedFinishTitle).toMatch(/no cost fit/);
    expect(lent).toMatchObject({
      id: 'l1',
      position: DASH,
      predictedStart: DASH,
      predictedFinish: 'due',
      helper: 'gpu-b/b',
    });
  });

  it('issue #15: an older node sends no predictions: every new column shows —', () => {
    const [row] = requestRows(
      { nodeId: 'old', models: [{ model: 'a', depth: 2, active: [], held: [item('q', 'queued', 0)] }] },
      T0,
    ).held;
    expect(row).toMatchObject({ position: DASH, predictedStart: DASH, predictedFinish: DASH, helper: DASH });
    expect(row.predictedFinishTitle).toBe('not reported by this node');
  });

  it('a summary of what is held, by mark', () => {
    expect(heldSummary(requestRows(ownerHeld, T0).held)).toBe('1 queued · 1 held · 1 lent');
    expect(heldSummary([])).toBeNull();
  });
});

// Every model's requests at a backend, linked or not (UI-2): the node's active list.
const slaveActive: ActiveNodeWire = {
  nodeId: 'gpu-b',
  requests: [
    {
      id: 'straight-2',
      model: 'wide',
      clusterId: 'wide',
      lane: 'text',
      started: iso(300),
      stream: true,
      via: 'backend',
      lentFrom: null,
    },
    {
      id: 'borrowed-1',
      model: 'b',
      clusterId: 'model-b',
      lane: 'text',
      started: iso(100),
      stream: false,
      via: 'router_queue',
      lentFrom: { nodeId: 'master', model: 'a' },
    },
    {
      id: 'static-1',
      model: 'ext',
      clusterId: 'ext',
      lane: 'static',
      started: 'soon',
      stream: false,
      via: 'static_route',
      lentFrom: null,
    },
  ],
};

describe('active requests (UI-2)', () => {
  it('every model of the node: model, lane, started, streamed or not, lent from which owner; oldest first', () => {
    const rows = activeRows(slaveActive, undefined, T0 + 1_100);
    expect(rows.map((r) => [r.id, r.model, r.lane, r.streamed, r.lentFrom, r.via, r.age])).toEqual([
      ['borrowed-1', 'b', 'text', 'not streamed', 'master/a', 'router queue', '1 s'],
      ['straight-2', 'wide', 'text', 'streamed', '—', 'backend', '800 ms'],
      ['static-1', 'ext', 'static', 'not streamed', '—', 'static route', DASH],
    ]);
    expect(rows[0]).toMatchObject({
      started: expect.stringMatching(/^\d{2}:\d{2}:\d{2}\.100$/),
      startedTitle: iso(100),
      modelTitle: 'b (clients: model-b)',
    });
    expect(rows[2].started).toBe(DASH);
  });

  it("an older node without an active list: its queues' requests at the engine, lane and owner unknown", () => {
    const rows = activeRows(undefined, ownerHeld, T0 + 1_000);
    expect(rows.map((r) => [r.id, r.lane, r.via])).toEqual([
      ['stray', DASH, DASH],
      ['active-1', DASH, DASH],
      ['active-2', DASH, DASH],
    ]);
    expect(activeRows({ nodeId: 'x', requests: [], error: 'timeout' }, ownerHeld, T0)).toHaveLength(3);
  });
});

describe('node cards', () => {
  const nodes = [
    node({}),
    node({ nodeId: 'gpu-b', url: 'http://127.0.0.1:9', role: 'slave', local: false, settingsHash: 'bbbb', models: 2 }),
  ];

  it('health, build, settings sync from the Lending view (the answering node is the reference), requests', () => {
    const cards = nodeCards(nodes, lending([ownerHeld, { nodeId: 'gpu-b', models: [] }]), T0);
    expect(cards.map((c) => [c.nodeId, c.health.label, c.build, c.settings.label, c.settings.tone, c.url])).toEqual([
      ['master', 'this node', '0.1.0', 'reference', 'ok', 'this node'],
      ['gpu-b', 'healthy', '0.1.0', 'differs from master', 'bad', 'http://127.0.0.1:9'],
    ]);
    expect(cards[0]).toMatchObject({ enrolled: ['a'], heldSummary: '1 queued · 1 held · 1 lent', heldNote: null });
    expect(cards[1]).toMatchObject({ enrolled: [], held: [], active: [], heldNote: null });
    expect(cards[1].activeNote).toMatch(/does not list its active requests/);
  });

  it('a node with no link still lists its active requests; a node whose list failed says so', () => {
    const cards = nodeCards(
      nodes,
      lending([ownerHeld, { nodeId: 'gpu-b', models: [] }], {
        active: [{ nodeId: 'master', requests: [], error: '503' }, slaveActive],
      }),
      T0,
    );
    expect(cards[1]).toMatchObject({ enrolled: [], activeNote: null, held: [] });
    expect(cards[1].active.map((r) => r.id)).toEqual(['borrowed-1', 'straight-2', 'static-1']);
    expect(cards[0].activeNote).toBe("Active requests not read: 503; listing only linked models' requests.");
    expect(cards[0].active).toHaveLength(3);
  });

  it('an unreachable node shows why; held requests not read say so; no Lending view: not reported', () => {
    const down = [
      node({}),
      node({
        nodeId: 'gpu-b',
        local: false,
        healthy: false,
        lastError: 'connect ECONNREFUSED',
        version: null,
        settingsHash: null,
      }),
    ];
    const cards = nodeCards(down, lending([ownerHeld, { nodeId: 'gpu-b', models: [], error: 'timeout' }]), T0);
    expect(cards[1]).toMatchObject({
      health: { label: 'unreachable', tone: 'bad' },
      lastError: 'connect ECONNREFUSED',
      build: DASH,
      settingsHash: DASH,
      heldNote: 'Held requests not read: timeout',
    });
    const none = nodeCards(down, null, T0);
    expect(none.map((c) => c.settings.label)).toEqual(['not reported', 'not reported']);
    expect(none[0].heldNote).toBe('Held requests not read yet.');
  });
});

describe('Nodes page markup', () => {
  const never = (): Promise<ApiResult<never>> => new Promise(() => {});
  const client = new Proxy({}, { get: () => never }) as ConsoleClient;

  function render(view: LendingViewWire | null): string {
    const store = createAppStore('http://node', { client, now: () => 0 });
    store.setState((s) => ({
      cluster: {
        ...s.cluster,
        nodes: [node({}), node({ nodeId: 'gpu-b', role: 'slave', local: false, settingsHash: 'bbbb' })],
        fetchedAt: T0,
      },
      lending: { ...s.lending, view, fetchedAt: T0 + 1_000 },
    }));
    const serving = { ...store, getInitialState: store.getState };
    return renderToStaticMarkup(createElement(AppStoreContext.Provider, { value: serving }, createElement(NodesPage)));
  }

  it('one card per node; held rows carry their mark, active rows none; never NaN', () => {
    const html = render(lending([ownerHeld, { nodeId: 'gpu-b', models: [] }]));
    expect(html.match(/data-testid="node-card"/g)).toHaveLength(2);
    expect(html.match(/data-testid="held-requests-row"/g)).toHaveLength(3);
    expect(html.match(/data-testid="active-requests-row"/g)).toHaveLength(3);
    for (const mark of ['queued', 'held', 'lent']) expect(html).toContain(`data-state="${mark}"`);
    expect(html).toContain('data-testid="node-not-enrolled"');
    expect(html).not.toContain('NaN');
  });

  it('active rows of a node with no link, with lane, stream and lent-from columns; the view parses with its schema', () => {
    const view = lending([ownerHeld, { nodeId: 'gpu-b', models: [] }], {
      active: [{ nodeId: 'master', requests: [] }, slaveActive],
    });
    expect(lendingViewSchema.parse(view)).toEqual(view);
    const html = render(view);
    expect(html.match(/data-testid="active-requests-row"/g)).toHaveLength(3);
    expect(html).toContain('data-via="router queue"');
    expect(html).toContain('>master/a<');
    expect(html).toContain('>streamed<');
    expect(html).toContain('data-testid="node-not-enrolled"');
  });

  it('before the Lending view is read, no request table', () => {
    const html = render(null);
    expect(html).not.toContain('held-requests');
    expect(html).toContain('Held requests not read yet.');
  });
});

describe('screens', () => {
  it('Nodes, Lending and Links have their addresses; anything else is the first screen', () => {
    expect(SCREENS.map((s) => s.id)).toEqual(['models', 'nodes', 'lending', 'links', 'runtime', 'settings']);
    expect(['#nodes', '#/lending', '#links?x=1', '#lending/rows', '#nope'].map(screenFromHash)).toEqual([
      'nodes',
      'lending',
      'links',
      'lending',
      'models',
    ]);
  });
});
