import { describe, expect, it } from 'vitest';
import {
  ollamaChatToOpenAI, ollamaEmbedToOpenAI, ollamaGenerateToOpenAI, openAIChatToOllama, openAIEmbeddingsToOllama, openAIStreamToOllama,
} from '../../src-router/serve';

describe('Ollama ↔ OpenAI translation', () => {
  it('maps a chat request, streaming by default, options to sampling fields', () => {
    expect(ollamaChatToOpenAI({ model: 'm', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 8, temperature: 0, seed: 3, top_k: 5 } })).toEqual({
      model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 8, temperature: 0, seed: 3,
    });
    expect(ollamaChatToOpenAI({ model: 'm', messages: [], stream: false }).stream).toBe(false);
  });

  it('turns an images list into image_url parts (structure the guardian reads)', () => {
    const body = ollamaChatToOpenAI({ model: 'm', messages: [{ role: 'user', content: 'what is this', images: ['iVBORw0KGgo='] }] });
    expect((body.messages as { content: unknown }[])[0].content).toEqual([
      { type: 'text', text: 'what is this' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });

  it('maps generate with a system prompt and embed', () => {
    expect(ollamaGenerateToOpenAI({ model: 'm', prompt: 'p', system: 's', stream: false })).toEqual({ model: 'm', prompt: 's\n\np', stream: false });
    expect(ollamaEmbedToOpenAI({ model: 'm', input: ['a', 'b'] })).toEqual({ model: 'm', input: ['a', 'b'] });
  });

  it('maps responses back with done fields', () => {
    const r = openAIChatToOllama({ choices: [{ message: { content: 'hello' }, finish_reason: 'length' }], usage: { prompt_tokens: 3, completion_tokens: 2 } }, 'pub', performance.now());
    expect(r).toMatchObject({ model: 'pub', message: { role: 'assistant', content: 'hello' }, done: true, done_reason: 'length', eval_count: 2, prompt_eval_count: 3 });
    expect(openAIEmbeddingsToOllama({ data: [{ embedding: [1, 2] }, { embedding: [3, 4] }] }, 'pub', 0).embeddings).toEqual([[1, 2], [3, 4]]);
  });

  it('streams one NDJSON object per text chunk and a final done object', async () => {
    async function* chunks() {
      yield { choices: [{ delta: { role: 'assistant' } }] };
      yield { choices: [{ delta: { content: 'he' } }] };
      yield { choices: [{ delta: { content: 'llo' } }] };
      yield { choices: [{ delta: {}, finish_reason: 'stop' }] };
    }
    const out = [];
    for await (const o of openAIStreamToOllama(chunks(), 'chat', 'pub', performance.now())) out.push(o);
    expect(out.map((o) => [(o.message as { content: string }).content, o.done])).toEqual([['he', false], ['llo', false], ['', true]]);
    expect(out[2]).toMatchObject({ done_reason: 'stop', eval_count: 2, model: 'pub' });
  });
});
