import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldNodeSchema } from '../../src-router/contract';
import { type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';
import { type RawAnswer as Answer, rawPost as post, sseLines, teeFetch } from '../support/raw-post';

// Issue #15: every answer of /v1/* and /api/* says the node that ran it (x-routerdesk-node), how long it waited in
// the router queue and for the lane (x-routerdesk-queue-ms) and, when lent, the helper (x-routerdesk-lent-to); a
// forwarded request names the slave that ran it. A stream waiting in a router queue sends SSE comments with its
// position (at most one a second, none once it runs); its queue time then comes as a trailer. A forwarded stream
// waiting in its slave's queue gets the slave's positions through the master; streams are never lent (LLM-4), and
// one waiting at an owner that lends its other requests still gets its comments. Ollama streams (NDJSON) have no
// comments: their head waits, with the facts. The Nodes page's held view carries positions, predictions and the
// helper of a lent request.

const chatBody = (model: string, maxTokens: number, stream = false) => ({
  model,
  messages: [{ role: 'user', content: 'hello there' }],
  max_tokens: maxTokens,
  stream,
});
const queueMs = (a: Answer) => Number(a.headers['x-routerdesk-queue-ms']);
const messages = [{ role: 'user' as const, content: 'hello there' }];
/** The JSON events of an SSE body, `[DONE]` left out. */
const dataEvents = (body: string) =>
  sseLines(body)
    .lines.filter((l) => l.startsWith('data:') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(5)) as { model?: string; choices?: { delta?: { content?: string } }[] });

describe('answer headers on local, forwarded and lent answers', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '100ms') }, helper: { b: simText('model-b', '20ms') } },
    });
    // Both models loaded and measured (fits after 3 samples), then linked owner/a → helper/b.
    for (let i = 0; i < 3; i++) {
      const answers = await Promise.all([c.chat('owner', 'model-a'), c.chat('helper', 'model-b')]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  }, 60_000);
  afterAll(() => c?.stop());

  /** The owner's model-a queue as its held view shows it. */
  const ownerQueue = async () =>
    heldNodeSchema.parse(await c.node(c.urlOf('owner'), '/router/v1/node/held')).models.find((m) => m.model === 'a')!;
  /** Two long jobs sent to the owner fill its engine (depth 2; at the engine, never lent): what comes next waits. */
  const fillOwner = async (tokens: number) => {
    const long = [
      post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', tokens)),
      post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', tokens)),
    ];
    await eventually(async () => (await ownerQueue()).active.length === 2, { what: "two jobs at the owner's engine" });
    return long;
  };

  it('a local answer names its node and its wait, not lent; an error and the model list name the node too', async () => {
    const a = await post(c.urlOf('helper'), '/v1/chat/completions', chatBody('model-b', 4));
    expect(a.status).toBe(200);
    expect(a.headers['x-routerdesk-node']).toBe('helper');
    expect(queueMs(a)).toBeGreaterThanOrEqual(0);
    expect(a.headers['x-routerdesk-lent-to']).toBeUndefined();
    const ollama = await post(c.urlOf('helper'), '/api/chat', {
      model: 'model-b',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_predict: 4 },
    });
    expect(ollama.status).toBe(200);
    expect(ollama.headers['x-routerdesk-node']).toBe('helper');
    expect(queueMs(ollama)).toBeGreaterThanOrEqual(0);
    const missing = await post(c.urlOf('helper'), '/v1/chat/completions', chatBody('no-such-model', 4));
    expect(missing.status).toBe(404);
    expect(missing.headers['x-routerdesk-node']).toBe('helper');
    const list = await fetch(`${c.urlOf('helper')}/v1/models`);
    expect(list.headers.get('x-routerdesk-node')).toBe('helper');
  });

  it('a forwarded answer names the slave that ran it, streamed or not', async () => {
    const a = await post(c.master.url, '/v1/chat/completions', chatBody('model-b', 4));
    expect(a.status).toBe(200);
    expect(a.headers['x-routerdesk-node']).toBe('helper');
    expect(queueMs(a)).toBeGreaterThanOrEqual(0);
    const s = await post(c.master.url, '/v1/chat/completions', chatBody('model-b', 4, true));
    expect(s.status).toBe(200);
    expect(s.body).toContain('data: [DONE]');
    expect(s.headers['x-routerdesk-node']).toBe('helper');
    expect(queueMs(s)).toBeGreaterThanOrEqual(0);
  });

  it('a lent answer names the helper that ran it; the held view lists the lent one with its helper', async () => {
    let sawLentView = false;
    let sawPrediction = false;
    let sawLentFinish = false;
    const lent = await eventually(
      async () => {
        // A backlog on the owner (8 tokens × 100 ms a job) that the faster helper takes part of.
        const burst = Promise.all(
          Array.from({ length: 6 }, () => post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', 8))),
        );
        const seen = eventually(
          async () => {
            const view = heldNodeSchema.parse(await c.node(c.urlOf('owner'), '/router/v1/node/held'));
            const held = view.models.flatMap((m) => m.held);
            const l = held.find((i) => i.state === 'lent');
            if (l) {
              expect(l.helper).toBe('helper/b');
              expect(l.position).toBeNull();
              sawLentView = true;
            }
            const waiting = held.filter((i) => i.state !== 'lent');
            if (waiting.length) expect(waiting.map((i) => i.position)).toEqual(waiting.map((_, k) => k + 1));
            // The same work as the measured jobs (8 tokens: a constant fit prices it): predicted start before finish.
            for (const w of waiting)
              if (w.predictedStart && w.predictedFinish)
                sawPrediction ||= Date.parse(w.predictedStart) < Date.parse(w.predictedFinish);
            if (l?.predictedFinish) sawLentFinish = true;
            return l;
          },
          { timeoutMs: 6_000, everyMs: 20, what: 'a lent request in the held view' },
        ).catch(() => undefined);
        const [answers] = await Promise.all([burst, seen]);
        expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
        return answers.find((a) => a.headers['x-routerdesk-lent-to']);
      },
      { timeoutMs: 45_000, everyMs: 200, what: 'a lent answer' },
    );
    expect(lent.headers['x-routerdesk-lent-to']).toBe('helper/b');
    expect(lent.headers['x-routerdesk-node']).toBe('helper');
    expect(queueMs(lent)).toBeGreaterThanOrEqual(0);
    expect(sawLentView).toBe(true);
    expect(sawPrediction).toBe(true);
    expect(sawLentFinish).toBe(true);
    // The owner's own answers of that model say the owner ran them.
    const own = await post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', 2));
    expect(own.headers['x-routerdesk-node']).toBe('owner');
  }, 60_000);

  it('a stream waiting in the router queue sends its position as SSE comments, none once it runs; its wait comes as a trailer', async () => {
    // Two long jobs fill the owner's engine (depth 2; at the engine, never lent): the stream waits behind them.
    const long = [
      post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', 25)),
      post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', 25)),
    ];
    await eventually(
      async () => {
        const view = heldNodeSchema.parse(await c.node(c.urlOf('owner'), '/router/v1/node/held'));
        return view.models.find((m) => m.model === 'a')!.active.length === 2;
      },
      { what: "two jobs at the owner's engine" },
    );
    const s = await post(c.urlOf('owner'), '/v1/chat/completions', chatBody('model-a', 3, true));
    expect(s.status).toBe(200);
    const lines = s.body.split('\n').filter(Boolean);
    const comments = lines.filter((l) => l.startsWith(':'));
    expect(comments.length).toBeGreaterThan(0);
    for (const l of comments) expect(l).toMatch(/^: queued, position \d+$/);
    // Every comment comes before the first event: none once it runs.
    const firstData = lines.findIndex((l) => l.startsWith('data:'));
    expect(firstData).toBeGreaterThan(lines.lastIndexOf(comments[comments.length - 1]));
    expect(lines[lines.length - 1]).toBe('data: [DONE]');
    expect(s.headers['x-routerdesk-node']).toBe('owner');
    const waited = Number(s.trailers['x-routerdesk-queue-ms']);
    expect(waited).toBeGreaterThan(0);
    // At most one comment a second of waiting (the first at once).
    expect(comments.length).toBeLessThanOrEqual(Math.floor(waited / 1000) + 1);
    expect((await Promise.all(long)).map((a) => a.status)).toEqual([200, 200]);
  }, 30_000);

  it("a forwarded stream waiting in the slave's queue gets the slave's positions through the master, its wait as a trailer; an Ollama stream gets none, its head waits with the facts", async () => {
    const long = await fillOwner(25);
    const sse = post(c.master.url, '/v1/chat/completions', chatBody('model-a', 3, true));
    // First in the owner's queue; the Ollama stream then waits behind it.
    await eventually(async () => (await ownerQueue()).held.some((i) => i.stream && i.position === 1), {
      what: "the forwarded stream first in the owner's queue",
    });
    const ndjson = post(c.master.url, '/api/chat', {
      model: 'model-a',
      messages,
      stream: true,
      options: { num_predict: 3 },
    });
    const [s, o] = await Promise.all([sse, ndjson]);

    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toContain('text/event-stream');
    const { lines, comments, firstData } = sseLines(s.body);
    // The master has no queue of its own for it: every comment is the slave's position, relayed.
    expect(comments.length).toBeGreaterThan(0);
    expect(new Set(comments)).toEqual(new Set([': queued, position 1']));
    expect(firstData).toBeGreaterThan(lines.lastIndexOf(comments[comments.length - 1]));
    expect(lines[lines.length - 1]).toBe('data: [DONE]');
    const events = dataEvents(s.body);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.model).toBe('model-a');
    expect(s.headers['x-routerdesk-node']).toBe('owner');
    expect(s.headers['x-routerdesk-queue-ms']).toBeUndefined();
    expect(Number(s.trailers['x-routerdesk-queue-ms'])).toBeGreaterThan(0);

    expect(o.status).toBe(200);
    const chunks = o.body.split('\n').filter(Boolean);
    for (const l of chunks) expect(l.startsWith(':')).toBe(false);
    const parsed = chunks.map((l) => JSON.parse(l) as { done?: boolean; model?: string });
    expect(parsed[parsed.length - 1].done).toBe(true);
    expect(o.headers['x-routerdesk-node']).toBe('owner');
    expect(queueMs(o)).toBeGreaterThan(0);
    expect((await Promise.all(long)).map((a) => a.status)).toEqual([200, 200]);
  }, 30_000);

  it('streams are never lent (LLM-4): one waiting at an owner that lends the others gets its positions, which the openai client skips; lent answers name the helper through the master too', async () => {
    const tee = teeFetch();
    const client = new OpenAI({ baseURL: `${c.master.url}/v1`, apiKey: 'unused', fetch: tee.fetch, maxRetries: 0 });
    const round = await eventually(
      async () => {
        const long = await fillOwner(15);
        // A backlog behind the engine that the faster helper takes part of.
        const burst = Promise.all(
          Array.from({ length: 6 }, () =>
            client.chat.completions.create({ model: 'model-a', messages, max_tokens: 8 }).withResponse(),
          ),
        );
        const at = tee.raw.length;
        const { data: stream, response } = await client.chat.completions
          .create({ model: 'model-a', messages, max_tokens: 3, stream: true })
          .withResponse();
        const chunks: OpenAI.ChatCompletionChunk[] = [];
        for await (const chunk of stream) chunks.push(chunk);
        const [answers] = await Promise.all([burst, Promise.all(long)]);
        const lent = answers.filter((a) => a.response.headers.get('x-routerdesk-lent-to'));
        return lent.length ? { answers, lent, chunks, response, raw: await tee.raw[at] } : undefined;
      },
      { timeoutMs: 50_000, everyMs: 200, what: 'a round with lent answers beside a waiting stream' },
    );

    // The stream stayed with its owner and waited there, told its position.
    expect(round.response.headers.get('x-routerdesk-node')).toBe('owner');
    expect(round.response.headers.get('x-routerdesk-lent-to')).toBeNull();
    const { lines, comments, firstData } = sseLines(round.raw);
    expect(comments.length).toBeGreaterThan(0);
    for (const l of comments) expect(l).toMatch(/^: queued, position \d+$/);
    expect(firstData).toBeGreaterThan(lines.lastIndexOf(comments[comments.length - 1]));
    // The client made one chunk of every event and nothing of the comments.
    const events = dataEvents(round.raw);
    expect(round.chunks.length).toBe(events.length);
    expect(round.chunks.map((ch) => ch.model)).toEqual(events.map(() => 'model-a'));
    expect(round.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe(
      events.map((e) => e.choices?.[0]?.delta?.content ?? '').join(''),
    );

    // Lent through the master: the helper's node and model; the rest ran on the owner.
    for (const a of round.lent) {
      expect(a.response.headers.get('x-routerdesk-lent-to')).toBe('helper/b');
      expect(a.response.headers.get('x-routerdesk-node')).toBe('helper');
      expect(Number(a.response.headers.get('x-routerdesk-queue-ms'))).toBeGreaterThanOrEqual(0);
    }
    for (const a of round.answers) {
      expect(a.data.model).toBe('model-a');
      if (!round.lent.includes(a)) expect(a.response.headers.get('x-routerdesk-node')).toBe('owner');
    }
  }, 60_000);
});
