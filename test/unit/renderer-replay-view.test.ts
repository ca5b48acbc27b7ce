import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { recordedLinkRows } from '../../src-renderer/src/lending/replay-links';
import {
  changedSettings,
  emptyReplayDraft,
  REPLAY_FORM_KEYS,
  REPLAY_RANGES_MS,
  replayNotes,
  replayRequestOf,
  replayRows,
  settingPlaceholder,
} from '../../src-renderer/src/lending/replay-view';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { ReplayOutcomeWire, ReplayResultWire } from '../../src-router/contract/replay';
import { replayRequestSchema } from '../../src-router/contract/replay';

// The Lending tab's what-if replay, pure: the draft → the request, the result → the side-by-side rows; and the
// `replay` slice over a scripted fetch (the answer parsed with the contract).

const NOW = 1_700_000_000_000;
const outcome = (o: Partial<ReplayOutcomeWire> = {}): ReplayOutcomeWire => ({
  requests: 14,
  bursts: [{ index: 0, startedAt: NOW - 60_000, requests: 14, makespanMs: 2400 }],
  waitP50Ms: 800,
  waitP95Ms: 1500,
  completionP50Ms: 1000,
  completionP95Ms: 2300,
  lent: 5,
  returned: 1,
  cutOff: 0,
  loads: 1,
  ...o,
});
const recordedLinks = recordedLinkRows({
  text: {
    version: 1,
    links: [
      {
        id: 'L1',
        lane: 'text',
        owner: { node_id: 'master', model: 'a' },
        helper: { node_id: 'gpu-b', model: 'b' },
        load_if_unloaded: true,
        restore_after_borrow: false,
        weights: 'different',
        acknowledged: true,
        created_at: '',
        updated_at: '',
      },
    ],
  },
  image: { version: 1, links: [] },
});
const noLinks = { recorded: recordedLinks, current: [] };
const result = (o: Partial<ReplayResultWire> = {}): ReplayResultWire => ({
  from: NOW - 900_000,
  to: NOW,
  nodes: ['master', 'owner'],
  links: 1,
  settings: { offload_probe_idle: 300, scheduling_backend_depth: 1 },
  recorded: outcome(),
  replayed: outcome(),
  events: 420,
  capped: false,
  unpriced: 0,
  ...o,
});

describe('replay draft → request', () => {
  it('defaults to the last 15 minutes, nothing changed, the recorded links', () => {
    const r = replayRequestOf(emptyReplayDraft(), NOW);
    expect(r).toEqual({ ok: true, request: { from: NOW - REPLAY_RANGES_MS[1], to: NOW, settings: {} } });
    expect(replayRequestSchema.safeParse(r.ok && r.request).success).toBe(true);
    expect(REPLAY_FORM_KEYS.slice(0, 2)).toEqual(['offload_probe_idle', 'scheduling_backend_depth']);
  });

  it('typed settings become values of their kind; no links is an empty list', () => {
    const r = replayRequestOf(
      {
        rangeMs: REPLAY_RANGES_MS[0],
        settings: {
          offload_probe_idle: ' 30 s ',
          scheduling_backend_depth: '2',
          offload_hold_for_faster_helper: 'false',
          scheduling_min_samples: '',
        },
        links: noLinks,
        linkPick: { owner: '', helper: '' },
      },
      NOW,
    );
    expect(r).toEqual({
      ok: true,
      request: {
        from: NOW - 300_000,
        to: NOW,
        settings: { offload_probe_idle: '30s', scheduling_backend_depth: 2, offload_hold_for_faster_helper: false },
        links: [],
      },
    });
    expect(replayRequestSchema.safeParse(r.ok && r.request).success).toBe(true);
  });

  it('a value the node would refuse names its field', () => {
    expect(
      replayRequestOf({ ...emptyReplayDraft(), settings: { scheduling_backend_depth: 'two' } }, NOW),
    ).toMatchObject({ ok: false, field: 'settings.scheduling_backend_depth' });
    expect(replayRequestOf({ ...emptyReplayDraft(), settings: { offload_probe_idle: 'soon' } }, NOW)).toMatchObject({
      ok: false,
      field: 'settings.offload_probe_idle',
    });
    expect(
      replayRequestOf({ ...emptyReplayDraft(), settings: { offload_hold_for_faster_helper: 'maybe' } }, NOW),
    ).toMatchObject({ ok: false, field: 'settings.offload_hold_for_faster_helper' });
  });

  it('lists what the draft changes', () => {
    expect(changedSettings(emptyReplayDraft())).toEqual([]);
    expect(
      changedSettings({
        ...emptyReplayDraft(),
        settings: { scheduling_backend_depth: '3', offload_probe_idle: '1h' },
        links: noLinks,
      }),
    ).toEqual(['offload_probe_idle=1h', 'scheduling_backend_depth=3', 'no links']);
  });
});

describe('replay result → rows', () => {
  it("each burst's makespan, the percentiles and counts, recorded beside replayed", () => {
    const rows = replayRows(
      result({
        replayed: outcome({
          bursts: [{ index: 0, startedAt: NOW - 60_000, requests: 14, makespanMs: 4800 }],
          lent: 0,
          completionP95Ms: 12_345,
          waitP50Ms: null,
        }),
      }),
    );
    expect(rows.map((r) => r.key)).toEqual([
      'burst-1',
      'wait-p50',
      'wait-p95',
      'completion-p50',
      'completion-p95',
      'requests',
      'lent',
      'returned',
      'cut-off',
      'loads',
    ]);
    const by = Object.fromEntries(rows.map((r) => [r.key, r]));
    expect(by['burst-1']).toEqual({
      key: 'burst-1',
      label: 'burst 1 makespan (14 req)',
      recorded: '2400 ms',
      replayed: '4800 ms',
      ratio: '2.00×',
      differs: true,
    });
    expect(by['wait-p50']).toMatchObject({ recorded: '800 ms', replayed: '—', ratio: '—', differs: true });
    expect(by['completion-p95']).toMatchObject({ recorded: '2300 ms', replayed: '12.3 s' });
    expect(by.lent).toMatchObject({ recorded: '5', replayed: '0', ratio: '0.00×', differs: true });
    expect(by.requests).toMatchObject({ recorded: '14', replayed: '14', differs: false });
    expect(by['cut-off']).toMatchObject({ ratio: '—', differs: false });
  });

  it('a burst only one side has still gets its row', () => {
    const rows = replayRows(result({ replayed: outcome({ bursts: [] }) }));
    expect(rows[0]).toMatchObject({ key: 'burst-1', recorded: '2400 ms', replayed: '—' });
  });

  it('notes an early stop, unpriced requests, missing members, an empty range', () => {
    expect(replayNotes(result())).toEqual([]);
    const notes = replayNotes(
      result({ capped: true, unpriced: 2, missing: ['gpu-b'], recorded: outcome({ requests: 0 }) }),
    );
    expect(notes).toHaveLength(4);
    expect(notes.join(' ')).toMatch(/gpu-b/);
    // The decision latency and relay hop the replay ran with (measured from the record where it could).
    expect(
      replayNotes(result({ settings: { offload_probe_idle: 300, decision_latency_ms: 26, relay_ms: 10.5 } })),
    ).toEqual([
      "replayed with the master's decisions taking 26 ms and a relay hop 10.5 ms, measured from the record (loopback values where it had none)",
    ]);
  });
});

describe('setting placeholders', () => {
  it('the value the last replay ran with, durations in their unit', () => {
    expect(settingPlaceholder(null, 'offload_probe_idle')).toBe('as recorded');
    expect(settingPlaceholder(result(), 'offload_probe_idle')).toBe('300ms');
    expect(
      settingPlaceholder(
        result({ settings: { offload_probe_idle: 3_600_000, scheduling_sample_window: 1_209_600_000 } }),
        'offload_probe_idle',
      ),
    ).toBe('1h');
    expect(
      settingPlaceholder(result({ settings: { scheduling_sample_window: 1_209_600_000 } }), 'scheduling_sample_window'),
    ).toBe('14d');
    expect(settingPlaceholder(result(), 'scheduling_backend_depth')).toBe('1');
  });
});

describe('replay slice', () => {
  function setup(answer: (body: unknown) => Response) {
    const bodies: unknown[] = [];
    const fetch: FetchLike = async (url, init) => {
      expect(new URL(url).pathname).toBe('/router/v1/console/replay');
      expect(init?.method).toBe('POST');
      const body = JSON.parse(String(init?.body));
      bodies.push(body);
      return answer(body);
    };
    return {
      store: createAppStore('http://127.0.0.1:8080', {
        client: createConsoleClient({ url: 'http://127.0.0.1:8080', token: 't', fetch }),
        now: () => NOW,
      }),
      bodies,
    };
  }
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it('posts the draft and keeps the parsed result with the draft it ran with', async () => {
    const { store, bodies } = setup(() => json(200, result()));
    store.getState().setReplayDraft({ settings: { offload_probe_idle: '1h' } });
    store.getState().setReplayDraft({ links: noLinks });
    await store.getState().runReplay();
    expect(bodies).toEqual([
      { from: NOW - REPLAY_RANGES_MS[1], to: NOW, settings: { offload_probe_idle: '1h' }, links: [] },
    ]);
    const s = store.getState().replay;
    expect(s.result?.events).toBe(420);
    expect(s.ranWith?.settings).toEqual({ offload_probe_idle: '1h' });
    expect(s.running).toBe(false);
    expect(s.failure).toBeNull();
  });

  it("a bad draft is named without asking the node; the node's 400 keeps its field", async () => {
    const { store, bodies } = setup(() =>
      json(400, {
        error: {
          message: 'to: the range is at most 24 h',
          type: 'invalid_request_error',
          param: 'to',
          code: 'invalid_request',
        },
      }),
    );
    store.getState().setReplayDraft({ settings: { scheduling_backend_depth: 'x' } });
    await store.getState().runReplay();
    expect(bodies).toHaveLength(0);
    expect(store.getState().replay.failure?.param).toBe('settings.scheduling_backend_depth');
    store.getState().setReplayDraft({ settings: { scheduling_backend_depth: '' } });
    await store.getState().runReplay();
    expect(store.getState().replay.failure).toMatchObject({ kind: 'http', status: 400, param: 'to' });
  });

  it('an answer that is not a replay result is a failure, not a result', async () => {
    const { store } = setup(() => json(200, { recorded: 1 }));
    await store.getState().runReplay();
    expect(store.getState().replay.result).toBeNull();
    expect(store.getState().replay.failure?.kind).toBe('invalid');
  });
});

describe('replay time-out', () => {
  it('the replay has its own bound (replayTimeoutMs, not the 10 s of other calls) and says so when it runs out', async () => {
    const signals: AbortSignal[] = [];
    // A node that never answers: the call ends when its signal fires (no sleeps in the test).
    const fetch: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => {
        const signal = init!.signal!;
        signals.push(signal);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const client = createConsoleClient({
      url: 'http://127.0.0.1:8080',
      token: 't',
      fetch,
      timeoutMs: 10_000,
      replayTimeoutMs: 25,
    });
    const r = await client.replay({ from: NOW - 60_000, to: NOW });
    expect(r).toEqual({
      ok: false,
      failure: {
        kind: 'unreachable',
        status: null,
        message: expect.stringMatching(/did not finish within 25 ms.*shorter range/),
      },
    });
    expect(signals[0].aborted).toBe(true);
  });

  it("the slice shows the time-out as the card's error and stops running", async () => {
    const fetch: FetchLike = async () => {
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    };
    const store = createAppStore('http://127.0.0.1:8080', {
      client: createConsoleClient({ url: 'http://127.0.0.1:8080', token: 't', fetch }),
      now: () => NOW,
    });
    await store.getState().runReplay();
    expect(store.getState().replay.running).toBe(false);
    expect(store.getState().replay.failure?.message).toBe(
      'the replay did not finish within 60 s (the console stopped waiting): replay a shorter range',
    );
  });

  it('other calls keep the generic unreachable message', async () => {
    const fetch: FetchLike = async () => {
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    };
    const r = await createConsoleClient({ url: 'http://127.0.0.1:8080', token: 't', fetch }).lending();
    expect(r.ok === false && r.failure.message).toMatch(/^node unreachable/);
  });
});
