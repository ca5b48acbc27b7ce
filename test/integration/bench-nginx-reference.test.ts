import { afterAll, describe, expect, it } from 'vitest';
import { startNginx } from '../../src-router/bench/nginx';
import { REFERENCE_ANSWER, REFERENCE_EMBEDDING } from '../../src-router/bench/proxy-wrk';
import { BenchScope } from '../../src-router/bench/scope';

// Issue #14: proxy-overhead's wrk table measures against real nginx answering fixed bodies. An embedding's answer is
// too long for nginx's `return`, so it is served from a file, to a POST as every request of the bench is.

const scope = new BenchScope();
afterAll(() => scope.close());

const post = (url: string, path: string) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"model":"m","input":"hello"}',
  });

describe("nginx as the bench's reference upstream", () => {
  it('answers a POST with the embedding reference, whole, as JSON, and the short reference as before', async () => {
    const embedding = await startNginx(scope, { answer: REFERENCE_EMBEDDING });
    const res = await post(embedding.url, '/v1/embeddings');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.text()).toBe(REFERENCE_EMBEDDING);
    const parsed = JSON.parse(REFERENCE_EMBEDDING) as { data: { embedding: number[] }[]; model: string };
    expect(parsed.data[0].embedding).toHaveLength(1_536);
    // Its model comes after the numbers: a router must find it without parsing them.
    expect(REFERENCE_EMBEDDING.indexOf('"model"')).toBeGreaterThan(REFERENCE_EMBEDDING.indexOf(']'));

    const chat = await startNginx(scope, { answer: REFERENCE_ANSWER });
    const short = await post(chat.url, '/v1/chat/completions');
    expect(short.status).toBe(200);
    expect(await short.text()).toBe(REFERENCE_ANSWER);
  });
});
