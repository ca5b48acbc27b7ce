import { describe, expect, it } from 'vitest';
import {
  checkNumCtx,
  isLoadCall,
  type OllamaClock,
  ollamaChatToOpenAI,
  ollamaDurations,
  ollamaEmbedToOpenAI,
  ollamaGenerateToOpenAI,
  openAIChatToOllama,
  openAIEmbeddingsToOllama,
  openAIStreamToOllama,
  parseKeepAlive,
  RouterError,
} from '../../src-router/serve';

/** A clock at a fixed point: the request arrived 100 ms ago and waited `loadMs` for its model. */
const clockAt = (loadMs = 0, elapsedMs = 100): OllamaClock => ({
  startedAt: 1000,
  loadMs: () => loadMs,
  now: () => 1000 + elapsedMs,
});

describe('Ollama ↔ OpenAI translation', () => {
  it('maps a chat request, streaming by default with usage on the last chunk, options to sampling fields', () => {
    expect(
      ollamaChatToOpenAI({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        options: { num_predict: 8, temperature: 0, seed: 3, top_k: 5, top_p: 0.9, stop: ['x'], num_ctx: 256 },
      }),
    ).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 8,
      temperature: 0,
      seed: 3,
      top_k: 5,
      top_p: 0.9,
      stop: ['x'],
    });
    expect(ollamaChatToOpenAI({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: false })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: false,
    });
    // num_predict -1 / -2 (no limit, fill the context) leave the engine's limit.
    expect(
      ollamaChatToOpenAI({ model: 'm', messages: [], stream: false, options: { num_predict: -1 } }).max_tokens,
    ).toBeUndefined();
  });

  it('maps format to response_format: "json" → json_object, a schema → json_schema; anything else is refused', () => {
    const schema = { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] };
    expect(ollamaGenerateToOpenAI({ model: 'm', prompt: 'p', stream: false, format: 'json' }).response_format).toEqual({
      type: 'json_object',
    });
    expect(ollamaChatToOpenAI({ model: 'm', messages: [], stream: false, format: schema }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema, strict: true },
    });
    expect(() => ollamaGenerateToOpenAI({ model: 'm', prompt: 'p', format: 'yaml' })).toThrow(
      /format: expected "json" or a JSON schema/,
    );
  });

  it('passes tools through and tool calls both ways (Ollama arguments are objects, OpenAI ones strings)', () => {
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
    const body = ollamaChatToOpenAI({
      model: 'm',
      stream: false,
      tools,
      messages: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ function: { name: 'weather', arguments: { city: 'Oslo' } } }],
        },
        { role: 'tool', content: '12C', tool_name: 'weather' },
      ],
    });
    expect(body.tools).toEqual(tools);
    expect((body.messages as Record<string, unknown>[])[0].tool_calls).toEqual([
      { id: 'call_0_0', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
    expect((body.messages as Record<string, unknown>[])[1]).toMatchObject({ role: 'tool', name: 'weather' });
    const answer = openAIChatToOllama(
      {
        choices: [
          {
            message: { content: '', tool_calls: [{ function: { name: 'weather', arguments: '{"city":"Bergen"}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'pub',
      clockAt(),
    );
    expect((answer.message as Record<string, unknown>).tool_calls).toEqual([
      { function: { name: 'weather', arguments: { city: 'Bergen' } } },
    ]);
  });

  it('turns an images list into image_url parts (structure the guardian reads)', () => {
    const body = ollamaChatToOpenAI({
      model: 'm',
      messages: [{ role: 'user', content: 'what is this', images: ['iVBORw0KGgo='] }],
    });
    expect((body.messages as { content: unknown }[])[0].content).toEqual([
      { type: 'text', text: 'what is this' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });

  it('maps generate with a system prompt and embed', () => {
    expect(ollamaGenerateToOpenAI({ model: 'm', prompt: 'p', system: 's', stream: false })).toEqual({
      model: 'm',
      prompt: 's\n\np',
      stream: false,
    });
    expect(ollamaEmbedToOpenAI({ model: 'm', input: ['a', 'b'] })).toEqual({ model: 'm', input: ['a', 'b'] });
  });

  it('knows the load call: a chat without messages, a generate without prompt', () => {
    expect(isLoadCall('chat', { model: 'm' })).toBe(true);
    expect(isLoadCall('chat', { model: 'm', messages: [] })).toBe(true);
    expect(isLoadCall('chat', { model: 'm', messages: [{ role: 'user', content: '' }] })).toBe(false);
    expect(isLoadCall('generate', { model: 'm' })).toBe(true);
    expect(isLoadCall('generate', { model: 'm', prompt: '' })).toBe(true);
    expect(isLoadCall('generate', { model: 'm', prompt: 'x' })).toBe(false);
  });

  it('reads keep_alive as Ollama does: seconds or Go durations; negative stays loaded; bad values name the field', () => {
    expect(parseKeepAlive(undefined)).toBeUndefined();
    expect(parseKeepAlive(0)).toBe(0);
    expect(parseKeepAlive('0')).toBe(0);
    expect(parseKeepAlive(30)).toBe(30_000);
    expect(parseKeepAlive('5m')).toBe(300_000);
    expect(parseKeepAlive('1h30m')).toBe(5_400_000);
    expect(parseKeepAlive('250ms')).toBe(250);
    expect(parseKeepAlive(-1)).toBeNull();
    expect(parseKeepAlive('-1m')).toBeNull();
    expect(() => parseKeepAlive('soon')).toThrow(/keep_alive: not a duration/);
    expect(() => parseKeepAlive('10000h')).toThrow(/keep_alive: too long/);
    const err = (() => {
      try {
        parseKeepAlive('x');
      } catch (e) {
        return e;
      }
    })() as RouterError;
    expect(err.status).toBe(400);
  });

  it('checks num_ctx against the window the engine was started with', () => {
    expect(() => checkNumCtx({ num_ctx: 512 }, 'm', 1024)).not.toThrow();
    expect(() => checkNumCtx({ num_ctx: 4096 }, 'm', null)).not.toThrow();
    expect(() => checkNumCtx({ num_ctx: 4096 }, 'm', 1024)).toThrow(
      /options.num_ctx: 4096 is more than the context window of model 'm' \(1024 tokens/,
    );
    expect(() => checkNumCtx({ num_ctx: 'big' }, 'm', 1024)).toThrow(/positive integer/);
  });

  it('durations in nanoseconds: the engine timings where reported, each within the wall time', () => {
    expect(ollamaDurations(clockAt(20, 100), { prompt_ms: 5, predicted_ms: 50 }, { promptMs: 0, evalMs: 0 })).toEqual({
      total_duration: 100e6,
      load_duration: 20e6,
      prompt_eval_duration: 5e6,
      eval_duration: 50e6,
    });
    // Without engine timings: what the router measured; never more than the wall time leaves.
    expect(ollamaDurations(clockAt(0, 100), undefined, { promptMs: 10, evalMs: 500 })).toEqual({
      total_duration: 100e6,
      load_duration: 0,
      prompt_eval_duration: 10e6,
      eval_duration: 90e6,
    });
    expect(ollamaDurations(clockAt(300, 100), undefined, { promptMs: 0, evalMs: 0 }).load_duration).toBe(100e6);
  });

  it('maps responses back with done fields, counts and durations', () => {
    const r = openAIChatToOllama(
      {
        choices: [{ message: { content: 'hello' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 3, completion_tokens: 2 },
        timings: { prompt_ms: 1, predicted_ms: 2 },
      },
      'pub',
      clockAt(10),
    );
    expect(r).toMatchObject({
      model: 'pub',
      message: { role: 'assistant', content: 'hello' },
      done: true,
      done_reason: 'length',
      eval_count: 2,
      prompt_eval_count: 3,
      total_duration: 100e6,
      load_duration: 10e6,
      prompt_eval_duration: 1e6,
      eval_duration: 2e6,
    });
    expect(
      openAIEmbeddingsToOllama({ data: [{ embedding: [1, 2] }, { embedding: [3, 4] }] }, 'pub', clockAt()).embeddings,
    ).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('an engine answer of the wrong shape is a 502 naming the field, not a silent empty answer', () => {
    const err = (() => {
      try {
        openAIChatToOllama({ choices: [{ message: { content: 7 } }] }, 'pub', clockAt());
      } catch (e) {
        return e;
      }
    })() as RouterError;
    expect(err).toBeInstanceOf(RouterError);
    expect(err.status).toBe(502);
    expect(err.message).toMatch(/engine for model 'pub' answered an unexpected shape: choices.0.message.content/);
    expect(() => openAIEmbeddingsToOllama({ data: 'none' }, 'pub', clockAt())).toThrow(/unexpected shape: data/);
  });

  it('streams one NDJSON object per text chunk and a final done object with the counts of the usage chunk and the engine timings', async () => {
    async function* chunks() {
      yield { choices: [{ delta: { role: 'assistant' } }] };
      yield { choices: [{ delta: { content: 'he' } }] };
      yield { choices: [{ delta: { content: 'llo' } }] };
      yield {
        choices: [{ delta: {}, finish_reason: 'stop' }],
        timings: { prompt_n: 4, prompt_ms: 3, predicted_n: 2, predicted_ms: 7 },
      };
      yield { choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } };
    }
    const out = [];
    for await (const o of openAIStreamToOllama(chunks(), 'chat', 'pub', clockAt())) out.push(o);
    expect(out.map((o) => [(o.message as { content: string }).content, o.done])).toEqual([
      ['he', false],
      ['llo', false],
      ['', true],
    ]);
    expect(out[2]).toMatchObject({
      done_reason: 'stop',
      eval_count: 2,
      prompt_eval_count: 4,
      model: 'pub',
      prompt_eval_duration: 3e6,
      eval_duration: 7e6,
    });
  });

  it('counts from the engine timings when a stream has no usage chunk', async () => {
    async function* chunks() {
      yield { choices: [{ text: 'a' }] };
      yield { choices: [{ text: '', finish_reason: 'length' }], timings: { prompt_n: 9, predicted_n: 1 } };
    }
    const out = [];
    for await (const o of openAIStreamToOllama(chunks(), 'generate', 'pub', clockAt())) out.push(o);
    expect(out.at(-1)).toMatchObject({
      response: '',
      done: true,
      done_reason: 'length',
      prompt_eval_count: 9,
      eval_count: 1,
    });
  });
});
