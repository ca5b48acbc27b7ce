import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ollamaChatSchema, ollamaEmbedSchema, ollamaGenerateSchema } from '../contract';
import {
  ollamaChatToOpenAI, ollamaEmbedToOpenAI, ollamaGenerateToOpenAI, openAIChatToOllama, openAICompletionToOllama, openAIEmbeddingsToOllama, openAIStreamToOllama,
} from '../serve';
import { clientSignal } from './client-signal';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';
import { rawBytes, servedByHeader } from './openai-routes';
import { writeStream } from './streaming';
import { servable } from '../registry/servable';

/** The Ollama-compatible client API under /api, translated onto the same executor. */
export async function ollamaRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.get('/api/version', async () => ({ version: deps.version }));

  app.get('/api/tags', async () => {
    const recipes = deps.assets.recipes.list();
    const names = new Set(recipes.map((r) => r.name));
    return {
      models: [
        ...deps.catalog.all().filter((e) => !names.has(e.id) && servable(e)).map((e) => {
          const rec = e.replicas[0].record;
          return {
            name: e.id, model: e.id, modified_at: deps.startedAt.toISOString(), size: 0, digest: rec.modelHash ?? rec.configHash,
            details: { format: rec.backend === 'llama-node' || rec.backend === 'llama-server' ? 'gguf' : rec.backend, family: rec.backend, families: null, parameter_size: '', quantization_level: '' },
          };
        }),
        // Split recipes (ASSET-4): one name, components on several nodes and backends.
        ...recipes.map((r) => {
          const backends = [...new Set(r.components.map((c) => c.backend))];
          return {
            name: r.name, model: r.name, modified_at: new Date(r.updatedAt).toISOString(), size: 0, digest: createHash('sha256').update(JSON.stringify(r.components)).digest('hex'),
            details: { format: 'recipe', family: backends[0], families: backends, parameter_size: '', quantization_level: '' },
          };
        }),
      ],
    };
  });

  app.get('/api/ps', async () => ({
    models: deps.supervisor
      .laneStatus()
      .filter((l) => l.loaded && l.state === 'ready')
      .map((l) => {
        const rec = deps.registry.byLocalId(l.loaded!)!;
        return { name: rec.publicId, model: rec.publicId, size: 0, digest: rec.modelHash ?? rec.configHash, details: {}, expires_at: null, size_vram: 0 };
      }),
  }));

  for (const [path, kind] of [['/api/chat', 'chat'], ['/api/generate', 'generate']] as const) {
    app.post(path, async (request, reply) => {
      const started = performance.now();
      const body = kind === 'chat' ? parseBody(ollamaChatSchema, request.body) : parseBody(ollamaGenerateSchema, request.body);
      const json = kind === 'chat' ? ollamaChatToOpenAI(body) : ollamaGenerateToOpenAI(body);
      const stream = json.stream === true;
      const out = await deps.executor.run({ endpoint: kind === 'chat' ? 'chat' : 'completion', model: body.model, json, stream, signal: clientSignal(reply), promptBytes: rawBytes(request) });
      servedByHeader(reply, out);
      const model = out.modelId;
      if (out.kind === 'sse') return writeStream(request, reply, openAIStreamToOllama(out.events, kind, model, started), 'ndjson', out.close, deps.writeTimeoutMs);
      if (out.status >= 400 || out.kind !== 'json') return reply.status(out.status).send({ error: errorText(out) });
      return kind === 'chat' ? openAIChatToOllama(out.body as object, model, started) : openAICompletionToOllama(out.body as object, model, started);
    });
  }

  const embed = (legacy: boolean) => async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    const started = performance.now();
    const body = parseBody(ollamaEmbedSchema, request.body);
    const out = await deps.executor.run({ endpoint: 'embedding', model: body.model, json: ollamaEmbedToOpenAI(body), stream: false, signal: clientSignal(reply), promptBytes: rawBytes(request) });
    if (out.status >= 400 || out.kind !== 'json') return reply.status(out.status).send({ error: errorText(out) });
    const result = openAIEmbeddingsToOllama(out.body as object, out.modelId, started);
    return legacy ? { embedding: (result.embeddings as number[][])[0] ?? [] } : result;
  };
  app.post('/api/embed', embed(false));
  app.post('/api/embeddings', embed(true));
}

function errorText(out: { kind: string; body?: unknown }): string {
  const b = out.body as { error?: { message?: string } } | string | undefined;
  return typeof b === 'string' ? b : (b?.error?.message ?? 'engine error');
}
