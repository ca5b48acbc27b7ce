import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { LinkCandidateList, LinkList, LinkRecord } from '../../src-router/contract';

// The `links` slice and the site API of links (UI-3, LINK-1..4), over a scripted fetch.

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';
const TEXT = '/router/v1/site/text-routing-groups';
const IMAGE = '/router/v1/site/routing-groups';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const A = { node_id: 'master', model: 'a' };
const B = { node_id: 'gpu-b', model: 'b' };
const record: LinkRecord = {
  id: 'l1',
  lane: 'text',
  owner: A,
  helper: B,
  load_if_unloaded: true,
  restore_after_borrow: false,
  weights: 'different',
  acknowledged: true,
  created_at: '2025-01-02T12:00:00.000Z',
  updated_at: '2025-01-02T12:00:00.000Z',
};
const list = (links: LinkRecord[], version = 1): LinkList => ({ version, links });
const picker = (acknowledgement_required: boolean): LinkCandidateList => ({
  lane: 'text',
  anchor: { ...A, public_id: 'model-a', model_hash: null },
  anchor_role: 'owner',
  candidates: [
    {
      ...B,
      public_id: 'model-b',
      weights: 'different',
      label: 'different weights',
      disabled: false,
      reason: acknowledgement_required ? 'ack' : null,
      code: acknowledgement_required ? 'acknowledgement_required' : null,
      acknowledgement_required,
    },
  ],
});
const ACK_409 = {
  error: {
    message: 'b on gpu-b does not have the same weights as a on master (…)',
    type: 'invalid_request_error',
    param: 'acknowledge_different_weights',
    code: 'acknowledgement_required',
  },
};

/** Answers by method and path (each a queue). */
function setup(answers: Record<string, (Response | ((init?: RequestInit) => Response))[]>) {
  const calls: { method: string; path: string; url: string; body: unknown }[] = [];
  const fetch: FetchLike = async (url, init) => {
    const u = new URL(url);
    const method = init?.method ?? 'GET';
    calls.push({
      method,
      path: u.pathname,
      url,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const next = answers[`${method} ${u.pathname}`]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${method} ${u.pathname}`);
    return typeof next === 'function' ? next(init) : next;
  };
  const store = createAppStore(URL_, { client: createConsoleClient({ url: URL_, token: TOKEN, fetch }), now: () => 5 });
  return { store, calls };
}

describe('links slice', () => {
  it('reads both lanes at their paths and mirrors them', async () => {
    const { store, calls } = setup({
      [`GET ${TEXT}`]: [json(200, list([record]))],
      [`GET ${IMAGE}`]: [json(200, list([], 1))],
    });
    await store.getState().fetchLinks();
    expect(calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual([`GET ${IMAGE}`, `GET ${TEXT}`]);
    expect(store.getState().links.text).toMatchObject({
      list: list([record]),
      failure: null,
      fetchedAt: 5,
      candidates: null,
    });
    expect(store.getState().links.image.list?.links).toEqual([]);
  });

  it('the picker for an anchor asks for the owner role; a cleared anchor clears it', async () => {
    const { store, calls } = setup({ [`GET ${TEXT}/candidates`]: [json(200, picker(true))] });
    await store.getState().fetchCandidates('text', A);
    expect(Object.fromEntries(new URL(calls[0].url).searchParams)).toEqual({
      node: 'master',
      model: 'a',
      role: 'owner',
    });
    expect(store.getState().links.text.candidates).toMatchObject({
      anchor: A,
      list: picker(true),
      loading: false,
      failure: null,
    });
    await store.getState().fetchCandidates('text', null);
    expect(store.getState().links.text.candidates).toBeNull();
  });

  it('an answer for an anchor no longer chosen is dropped', async () => {
    let release!: (r: Response) => void;
    const slow = new Promise<Response>((r) => (release = r));
    const fetch: FetchLike = async (url) =>
      new URL(url).searchParams.get('model') === 'a'
        ? slow
        : json(200, { ...picker(false), anchor: { ...B, public_id: 'model-b', model_hash: null } });
    const store = createAppStore(URL_, {
      client: createConsoleClient({ url: URL_, token: TOKEN, fetch }),
      now: () => 1,
    });
    const first = store.getState().fetchCandidates('text', A);
    await store.getState().fetchCandidates('text', B);
    release(json(200, picker(true)));
    await first;
    expect(store.getState().links.text.candidates?.anchor).toEqual(B);
    expect(store.getState().links.text.candidates?.list?.anchor.model).toBe('b');
  });

  it('create: POST the body as given; the 409 comes back with its code and message; the lane and picker are read again', async () => {
    const { store, calls } = setup({
      [`GET ${TEXT}/candidates`]: [json(200, picker(true)), json(200, picker(true)), json(200, picker(false))],
      [`POST ${TEXT}`]: [json(409, ACK_409), json(201, record)],
      [`GET ${TEXT}`]: [json(200, list([])), json(200, list([record], 2))],
      [`GET ${IMAGE}`]: [json(200, list([])), json(200, list([]))],
    });
    await store.getState().fetchCandidates('text', A);
    const body = { owner: A, helper: B, load_if_unloaded: true, restore_after_borrow: false };
    const first = await store.getState().createLink('text', body);
    expect(first).toEqual({
      ok: false,
      failure: {
        kind: 'http',
        status: 409,
        message: ACK_409.error.message,
        param: 'acknowledge_different_weights',
        code: 'acknowledgement_required',
      },
    });
    const second = await store.getState().createLink('text', { ...body, acknowledge_different_weights: true });
    expect(second).toEqual({ ok: true, value: record });
    const posts = calls.filter((c) => c.method === 'POST');
    expect(posts.map((p) => p.body)).toEqual([body, { ...body, acknowledge_different_weights: true }]);
    expect(store.getState().links.text.list).toEqual(list([record], 2));
    expect(store.getState().links.text.candidates?.list).toEqual(picker(false));
    expect(store.getState().links.text.writing).toBe(false);
  });

  it('flags: PUT /:id with only the flag changed; delete: DELETE /:id, 204 with no body', async () => {
    const { store, calls } = setup({
      [`PUT ${TEXT}/l1`]: [json(200, { ...record, restore_after_borrow: true })],
      [`DELETE ${TEXT}/l1`]: [new Response(null, { status: 204 })],
      [`GET ${TEXT}`]: [json(200, list([record])), json(200, list([]))],
      [`GET ${IMAGE}`]: [json(200, list([])), json(200, list([]))],
    });
    const put = await store.getState().updateLink('text', 'l1', { restore_after_borrow: true });
    expect(put.ok && put.value.restore_after_borrow).toBe(true);
    expect(calls[0]).toMatchObject({ method: 'PUT', body: { restore_after_borrow: true } });
    expect(await store.getState().deleteLink('text', 'l1')).toEqual({ ok: true, value: null });
    const del = calls.find((c) => c.method === 'DELETE')!;
    expect(del.body).toBeUndefined();
    expect(store.getState().links.text.list?.links).toEqual([]);
  });

  it('a write without an operator’s token is refused (403), not a rejected token; reads go on', async () => {
    const { store } = setup({
      [`DELETE ${TEXT}/l1`]: [
        json(403, {
          error: { message: 'only operators (console.operators) can change links', code: 'not_an_operator' },
        }),
      ],
      [`GET ${TEXT}`]: [json(200, list([record]))],
      [`GET ${IMAGE}`]: [json(200, list([]))],
    });
    const result = await store.getState().deleteLink('text', 'l1');
    expect(result).toEqual({
      ok: false,
      failure: {
        kind: 'refused',
        status: 403,
        message: 'only operators (console.operators) can change links',
        param: null,
        code: 'not_an_operator',
      },
    });
    expect(store.getState().links.text).toMatchObject({ list: list([record]), failure: null });
    expect(store.getState().connection.status).toBe('connecting');
  });

  it('an id is escaped in the path', async () => {
    const { store, calls } = setup({
      [`PUT ${TEXT}/a%2Fb`]: [json(404, { error: { message: "no text link 'a/b'", code: 'link_not_found' } })],
      [`GET ${TEXT}`]: [json(200, list([]))],
      [`GET ${IMAGE}`]: [json(200, list([]))],
    });
    const r = await store.getState().updateLink('text', 'a/b', { load_if_unloaded: false });
    expect(calls[0].path).toBe(`${TEXT}/a%2Fb`);
    expect(r.ok ? null : r.failure.code).toBe('link_not_found');
  });
});
