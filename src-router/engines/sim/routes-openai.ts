import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { hasImageInput } from '../../contract/client-requests';
import type { SimEngineContext } from './context';
import { sendError } from './errors';
import { countTokens, embed, embeddingBase64, paceTokens, seedOf, tokenText } from './generation';
import { type Job, readHooks, runJob, startEventStream, work, writeEvent } from './job';
import { LLAMA_SERVER_BUILD } from './routes-llama-server';

type Body = Record<string, unknown>;
type Kind = 'chat' | 'completion';

function chatPrompt(messages: unknown[]): string {
  return messages
    .map((m) => {
      const { role, content } = (m ?? {}) as Body;
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content
                .map((p) =>
                  p && typeof p === 'object' && typeof (p as Body).text === 'string' ? (p as Body).text : '',
                )
                .join(' ')
            : '';
      return `${String(role ?? 'user')}: ${text}`;
    })
    .join('\n');
}

function completionPrompt(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) return prompt.join('\n');
  return JSON.stringify(prompt);
}

/** max_tokens, max_completion_tokens or n_predict when positive; undefined means "until the simulated EOS". */
function requestedTokens(body: Body): number | undefined {
  for (const key of ['max_tokens', 'max_completion_tokens', 'n_predict']) {
    const v = body[key];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  return undefined;
}

const newId = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

interface Generation {
  kind: Kind;
  id: string;
  created: number;
  model: string;
  seed: number;
  promptTokens: number;
  count: number;
  finish: 'stop' | 'length';
  withTimings: boolean;
  /** The llama-server shape: `system_fingerprint`, cached prompt tokens in `usage`, a role chunk first, no chat logprobs. */
  llama: boolean;
}

function usage(g: Generation) {
  const counts = { prompt_tokens: g.promptTokens, completion_tokens: g.count, total_tokens: g.promptTokens + g.count };
  return g.llama ? { ...counts, prompt_tokens_details: { cached_tokens: 0 } } : counts;
}

/** What every answer and chunk of the llama-server shape carries besides the OpenAI fields. */
const fingerprint = (g: Generation) => (g.llama ? { system_fingerprint: LLAMA_SERVER_BUILD } : {});

/**
 * llama-server's `timings`, every key in its order (`reference/llama-server/chat.json`). The sim spends no time on the
 * prompt (prompt_ms 0, its rates 0 rather than llama-server's division by zero); all its time is generation.
 */
function timings(g: Generation, ms: number) {
  return {
    cache_n: 0,
    prompt_n: g.promptTokens,
    prompt_ms: 0,
    prompt_per_token_ms: 0,
    prompt_per_second: 0,
    predicted_n: g.count,
    predicted_ms: ms,
    predicted_per_token_ms: ms / g.count,
    predicted_per_second: ms > 0 ? (g.count * 1000) / ms : 0,
  };
}

/**
 * One chunk of a stream: token `i`, the final one, or (`'role'`, llama-server's first chat chunk) the role alone. The
 * llama-server shape sends the role in a chunk of its own (content null) and no `logprobs` on chat chunks.
 */
function chunk(g: Generation, i: number | 'final' | 'role', extra: Body = {}) {
  const finish = i === 'final' ? g.finish : null;
  const head = { id: g.id, created: g.created, model: g.model, ...fingerprint(g) };
  if (g.kind === 'chat') {
    const delta =
      i === 'role'
        ? { role: 'assistant', content: null }
        : i === 'final'
          ? {}
          : i === 0 && !g.llama
            ? { role: 'assistant', content: tokenText(g.seed, 0) }
            : { content: tokenText(g.seed, i) };
    const choice = { index: 0, delta, ...(g.llama ? {} : { logprobs: null }), finish_reason: finish };
    return { ...head, object: 'chat.completion.chunk', choices: [choice], ...extra };
  }
  const text = i === 'final' || i === 'role' ? '' : tokenText(g.seed, i);
  return {
    ...head,
    object: 'text_completion',
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
    ...extra,
  };
}

async function streamGeneration(job: Job, reply: FastifyReply, g: Generation, includeUsage: boolean): Promise<void> {
  const started = performance.now();
  await paceTokens(g.count, job.tokenMs, job.signal, async (i) => {
    job.slot.tokens = g.promptTokens + i + 1;
    startEventStream(reply);
    if (i === 0 && g.llama && g.kind === 'chat') await writeEvent(reply, chunk(g, 'role'), job.signal);
    await writeEvent(reply, chunk(g, i), job.signal);
    if (i === 0 && job.crashing) await job.crash();
  });
  // llama-server sends its timings on the last chunk: the usage chunk when the client asked for one.
  const extra = g.withTimings ? { timings: timings(g, performance.now() - started) } : {};
  await writeEvent(reply, chunk(g, 'final', includeUsage ? {} : extra), job.signal);
  if (includeUsage) {
    const object = g.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    await writeEvent(
      reply,
      {
        id: g.id,
        object,
        created: g.created,
        model: g.model,
        ...fingerprint(g),
        choices: [],
        usage: usage(g),
        ...extra,
      },
      job.signal,
    );
  }
  await writeEvent(reply, '[DONE]', job.signal);
  reply.raw.end();
}

async function completeGeneration(job: Job, reply: FastifyReply, g: Generation): Promise<void> {
  const started = performance.now();
  const crashAt = Math.floor(g.count / 2);
  await paceTokens(g.count, job.tokenMs, job.signal, async (i) => {
    job.slot.tokens = g.promptTokens + i + 1;
    if (job.crashing && i === crashAt) await job.crash();
  });
  let text = '';
  for (let i = 0; i < g.count; i++) text += tokenText(g.seed, i);
  const common = { id: g.id, created: g.created, model: g.model, ...fingerprint(g) };
  const choice =
    g.kind === 'chat'
      ? {
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: text },
              ...(g.llama ? {} : { logprobs: null }),
              finish_reason: g.finish,
            },
          ],
        }
      : { object: 'text_completion', choices: [{ index: 0, text, logprobs: null, finish_reason: g.finish }] };
  const extra = g.withTimings ? { timings: timings(g, performance.now() - started) } : {};
  reply.send({ ...common, ...choice, usage: usage(g), ...extra });
}

function textHandler(ctx: SimEngineContext, kind: Kind) {
  return async (request: { body: unknown }, reply: FastifyReply) => {
    const body = (request.body ?? {}) as Body;
    let promptText: string;
    if (kind === 'chat') {
      if (!Array.isArray(body.messages) || body.messages.length === 0)
        return sendError(reply, 400, "'messages' must be a non-empty array");
      promptText = chatPrompt(body.messages);
    } else {
      if (body.prompt === undefined) return sendError(reply, 400, "'prompt' is required");
      promptText = completionPrompt(body.prompt);
    }
    const requested = requestedTokens(body);
    const g: Generation = {
      kind,
      id: newId(kind === 'chat' ? 'chatcmpl' : 'cmpl'),
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' && body.model ? body.model : ctx.modelId,
      seed: seedOf(promptText),
      promptTokens: countTokens(promptText),
      count: requested ?? ctx.options.tokens,
      finish: requested ? 'length' : 'stop',
      withTimings: ctx.options.shape === 'llama-server' && !ctx.options.no_timings,
      llama: ctx.options.shape === 'llama-server',
    };
    const streamOptions = (body.stream_options ?? {}) as Body;
    return runJob(ctx, request as never, reply, {
      hooks: readHooks(body),
      promptTokens: g.promptTokens,
      prompt: promptText,
      imageInput: kind === 'chat' && hasImageInput(body),
      run: async (job) => {
        if (body.stream === true) await streamGeneration(job, reply, g, streamOptions.include_usage === true);
        else await completeGeneration(job, reply, g);
      },
    });
  };
}

function embeddingInputs(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((v) => typeof v === 'number')) return [JSON.stringify(input)];
  return input.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/** Registers the OpenAI routes: chat, completions, embeddings, models. */
export function registerOpenAIRoutes(app: FastifyInstance, ctx: SimEngineContext, ownedBy: string): void {
  app.get('/v1/models', async () => ({
    object: 'list',
    data: [{ id: ctx.modelId, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: ownedBy }],
  }));

  app.post('/v1/chat/completions', textHandler(ctx, 'chat'));
  app.post('/v1/completions', textHandler(ctx, 'completion'));

  app.post('/v1/embeddings', async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const inputs = embeddingInputs(body.input);
    if (!inputs) return sendError(reply, 400, "'input' must be a string or a non-empty array");
    const base64 = body.encoding_format === 'base64';
    const promptTokens = inputs.reduce((n, text) => n + countTokens(text), 0);
    return runJob(ctx, request, reply, {
      hooks: readHooks(body),
      promptTokens,
      run: async (job) => {
        // One token time per input text.
        await work(job, job.tokenMs * inputs.length);
        reply.send({
          object: 'list',
          data: inputs.map((text, index) => {
            const vector = embed(text);
            return { object: 'embedding', index, embedding: base64 ? embeddingBase64(vector) : vector };
          }),
          model: typeof body.model === 'string' && body.model ? body.model : ctx.modelId,
          usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
        });
      },
    });
  });
}
