// The sim engine's llama-server shape against what a real llama-server answers (issue #11, "Engines as they really
// are"): `timings`, /props, /slots and /metrics names as in test/support/llama-server-reference/, so the adapter and
// the routing profiles meet in tests what they meet in production.
import { afterAll, describe, expect, it } from 'vitest';
import {
  ENGINE_METRIC_NAMES,
  type SimEngineHandle,
  type SimEngineOptionsInput,
  startSimEngine,
} from '../../src-router/engines/sim';
import { applyProfile, llamaCppProfile, parsePrometheusText, vllmProfile } from '../../src-router/routing';
import { shapeProblems } from '../support/json-shape';
import { referenceJson, referenceText } from '../support/llama-server-reference';

const engines: SimEngineHandle[] = [];
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
});

async function start(options: SimEngineOptionsInput = {}): Promise<SimEngineHandle> {
  const engine = await startSimEngine({ port: 0, load_time: 0, token_time: 1, ...options });
  engines.push(engine);
  await engine.loaded;
  return engine;
}

const get = async (engine: SimEngineHandle, path: string): Promise<any> => (await fetch(`${engine.url}${path}`)).json();
const post = (engine: SimEngineHandle, body: unknown, signal?: AbortSignal) =>
  fetch(`${engine.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

describe('sim llama-server shape = a real llama-server', () => {
  it('timings: every key of the reference, in its order, on a body and on the last chunk of a stream', async () => {
    const engine = await start();
    const referenceKeys = Object.keys(referenceJson('chat.json').timings);
    const body = (await (
      await post(engine, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 })
    ).json()) as any;
    expect(Object.keys(body.timings)).toEqual(referenceKeys);
    expect(body.timings).toMatchObject({ predicted_n: 4, prompt_n: body.usage.prompt_tokens });
    expect(body.timings.predicted_ms).toBeGreaterThan(0);
    const text = await (
      await post(engine, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, stream: true })
    ).text();
    const chunks = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    const withTimings = chunks.filter((c) => c.timings);
    expect(withTimings).toHaveLength(1);
    expect(withTimings[0].choices[0].finish_reason).toBe('length');
    expect(Object.keys(withTimings[0].timings)).toEqual(referenceKeys);
  });

  it('/props: the reference’s shape, with the slot context, slot count, vision and the endpoints that are on', async () => {
    const engine = await start({ ctx: 512, parallel: 2, alias: 'tiny' });
    const props = await get(engine, '/props');
    expect(shapeProblems(props, referenceJson('props.json'))).toEqual([]);
    expect(props).toMatchObject({
      default_generation_settings: { n_ctx: 512 },
      total_slots: 2,
      model_alias: 'tiny',
      modalities: { vision: false, video: false, audio: false },
      endpoint_slots: true,
      endpoint_metrics: true,
    });
    expect((await get(await start({ vision: true }), '/props')).modalities.vision).toBe(true);
  });

  it('/slots: one entry per slot with the reference’s keys; a running request marks its slot processing', async () => {
    const engine = await start({ ctx: 512, parallel: 2 });
    const referenceKeys = Object.keys(referenceJson('slots.json')[0]);
    const idle = await get(engine, '/slots');
    expect(idle).toEqual([
      { id: 0, n_ctx: 512, speculative: false, is_processing: false },
      { id: 1, n_ctx: 512, speculative: false, is_processing: false },
    ]);
    expect(Object.keys(idle[0])).toEqual(referenceKeys);
    const hang = new AbortController();
    const hung = post(engine, { messages: [{ role: 'user', content: 'x' }], sim_fail: 'hang' }, hang.signal).catch(
      (e: Error) => e,
    );
    for (;;) {
      const slots = await get(engine, '/slots');
      if (slots.some((s: { is_processing: boolean }) => s.is_processing)) {
        expect(slots.map((s: { is_processing: boolean }) => s.is_processing)).toEqual([true, false]);
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    hang.abort();
    expect(await hung).toBeInstanceOf(Error);
  });

  it('/metrics carries llama-server’s scheduler gauges under their real names and types; the llama.cpp profile reads them alike', async () => {
    const engine = await start({ parallel: 1 });
    const hang = new AbortController();
    const hung = [
      post(engine, { messages: [{ role: 'user', content: 'a' }], sim_fail: 'hang' }, hang.signal),
      post(engine, { messages: [{ role: 'user', content: 'b' }] }, hang.signal),
    ].map((p) => p.catch((e: Error) => e));
    while (engine.stats().queued < 1) await new Promise((r) => setTimeout(r, 10));
    const text = await (await fetch(`${engine.url}/metrics`)).text();
    const reference = referenceText('metrics.txt');
    for (const name of [ENGINE_METRIC_NAMES.llamaProcessing, ENGINE_METRIC_NAMES.llamaDeferred]) {
      expect(text).toContain(`# TYPE ${name} gauge`);
      expect(reference).toContain(`# TYPE ${name} gauge`);
    }
    const sim = applyProfile(llamaCppProfile, parsePrometheusText(text));
    const real = applyProfile(llamaCppProfile, parsePrometheusText(reference));
    expect(sim).toEqual({ num_requests_running: 1, num_requests_waiting: 1 });
    expect(Object.keys(real).sort()).toEqual(Object.keys(sim).sort());
    hang.abort();
    await Promise.all(hung);
  });

  it('vllm shape: the V1 scheduler and KV gauges the vllm profile reads', async () => {
    const engine = await start({ shape: 'vllm', kv_pages: 10 });
    const m = applyProfile(vllmProfile, parsePrometheusText(await (await fetch(`${engine.url}/metrics`)).text()));
    expect(m).toEqual({ num_requests_running: 0, num_requests_waiting: 0, kv_cache_usage: 0, kv_cache_usage_cpu: 0 });
  });
});
