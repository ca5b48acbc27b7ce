import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ModelConfig } from '../config';
import { ollamaChatSchema, ollamaEmbedSchema, ollamaGenerateSchema, ollamaModelNameSchema } from '../contract';
import type { LocalModelRecord } from '../registry';
import { servable } from '../registry/servable';
import {
  checkNumCtx,
  generateCarriesImages,
  isLoadCall,
  loadCallAnswer,
  ModelFactsCache,
  modelFacts,
  type OllamaClock,
  type OllamaModelFacts,
  OllamaModels,
  ollamaChatToOpenAI,
  ollamaEmbedToOpenAI,
  ollamaGenerateAsChat,
  ollamaGenerateToOpenAI,
  openAIChatToOllama,
  openAICompletionToOllama,
  openAIEmbeddingsToOllama,
  openAIStreamToOllama,
  parseKeepAlive,
  RouterError,
} from '../serve';
import { eachEvent } from '../serve/event-batch';
import { answerHeaders } from './answer-headers';
import { clientGone } from './client-gone';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';
import { rawBytes } from './openai-routes';
import { writeStream } from './streaming';

/** Ollama's model management, which this node leaves to model configs. */
const MANAGED_ELSEWHERE: [method: 'POST' | 'DELETE', path: string][] = [
  ['POST', '/api/pull'],
  ['POST', '/api/push'],
  ['POST', '/api/create'],
  ['POST', '/api/copy'],
  ['DELETE', '/api/delete'],
];

/** The Ollama-compatible client API under /api, translated onto the same executor. */
export async function ollamaRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const facts = new ModelFactsCache(deps.ggufHeaders);
  const models = new OllamaModels({
    catalog: deps.catalog,
    registry: deps.registry,
    supervisor: deps.supervisor,
    resolver: deps.executor.deps.resolver,
    clusterToken: deps.clusterToken,
    loadTimeoutMs: deps.executor.deps.requestTimeoutMs,
  });
  /** Facts of the first local config of a name; undefined when none is on this node. */
  const factsOf = async (
    name: string,
    opts: { verbose?: boolean } = {},
  ): Promise<{ rec: LocalModelRecord; facts: OllamaModelFacts } | undefined> => {
    const rec = models.localConfigs(name)[0];
    return rec ? { rec, facts: await facts.facts(rec.config, opts) } : undefined;
  };
  const clockFor = (name: string): OllamaClock => {
    const startedAt = performance.now();
    const since = Date.now();
    return { startedAt, loadMs: () => models.loadWaitMs(name, since) };
  };

  await app.register(async (scope) => {
    // Ollama's own examples send JSON with curl's default content type, or none: every /api/* body is read as JSON.
    // A request without a body has none to parse, whatever it says its type is.
    scope.addHook('onRequest', async (request) => {
      const h = request.raw.headers;
      const hasBody =
        h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
      if (hasBody) h['content-type'] = 'application/json';
      else delete h['content-type'];
    });

    scope.get('/api/version', async () => ({ version: deps.version }));

    scope.get('/api/tags', async () => {
      const recipes = deps.assets.recipes.list();
      const names = new Set(recipes.map((r) => r.name));
      const entries = deps.catalog.all().filter((e) => !names.has(e.id) && servable(e));
      return {
        models: [
          ...(await Promise.all(
            entries.map(async (e) => {
              const rec = e.replicas[0].record;
              const local = await factsOf(e.id);
              return {
                name: e.id,
                model: e.id,
                modified_at: (local?.facts.modifiedAt ?? deps.startedAt).toISOString(),
                size: local?.facts.size ?? 0,
                digest: rec.modelHash ?? rec.configHash,
                details: local?.facts.details ?? {
                  parent_model: '',
                  format: rec.backend,
                  family: rec.backend,
                  families: [rec.backend],
                  parameter_size: '',
                  quantization_level: '',
                },
              };
            }),
          )),
          // Split recipes (ASSET-4): one name, components on several nodes and backends.
          ...recipes.map((r) => {
            const backends = [...new Set(r.components.map((c) => c.backend))];
            return {
              name: r.name,
              model: r.name,
              modified_at: new Date(r.updatedAt).toISOString(),
              size: 0,
              digest: createHash('sha256').update(JSON.stringify(r.components)).digest('hex'),
              details: {
                parent_model: '',
                format: 'recipe',
                family: backends[0],
                families: backends,
                parameter_size: '',
                quantization_level: '',
              },
            };
          }),
        ],
      };
    });

    scope.get('/api/ps', async () => ({
      models: await Promise.all(
        deps.supervisor
          .laneStatus()
          .filter((l) => l.loaded && l.state === 'ready')
          .map(async (l) => {
            const rec = deps.registry.byLocalId(l.loaded!)!;
            const f = await facts.facts(rec.config);
            const unloadsAt = deps.supervisor.unloadsAt(rec.localId);
            const idleMs = deps.supervisor.idleUnloadMs(rec.localId);
            // Armed: when it unloads; busy with an idle limit: that long after now at the earliest; no limit: null.
            const expires = unloadsAt ?? (idleMs === null ? null : Date.now() + idleMs);
            return {
              name: rec.publicId,
              model: rec.publicId,
              size: f.size,
              digest: rec.modelHash ?? rec.configHash,
              details: f.details,
              expires_at: expires === null ? null : new Date(expires).toISOString(),
              size_vram: 0,
              context_length: f.contextLength ?? 0,
            };
          }),
      ),
    }));

    scope.post('/api/show', async (request) => {
      const body = parseBody(ollamaModelNameSchema, request.body);
      const name = body.model ?? body.name!;
      // This node's config: what its weights file says; a model on another node: what its record says.
      const entry = deps.catalog.get(name);
      const remote = entry?.replicas[0].record;
      const local = await factsOf(name, { verbose: body.verbose });
      if (!local && !remote) throw new RouterError(404, 'model_not_found', `model '${name}' not found`);
      if (local?.facts.headerError)
        throw new RouterError(422, 'model_file_unreadable', `model '${name}': ${local.facts.headerError}`);
      const f =
        local?.facts ??
        modelFacts(
          {
            backend: remote!.backend as ModelConfig['backend'],
            capabilities: remote!.capabilities as ModelConfig['capabilities'],
            contextsize: remote!.contextsize ?? undefined,
          },
          null,
          undefined,
        );
      return {
        license: f.license,
        modelfile: '',
        parameters: f.parameters,
        template: f.template,
        system: '',
        details: f.details,
        model_info: f.modelInfo,
        capabilities: f.capabilities,
        modified_at: (f.modifiedAt ?? deps.startedAt).toISOString(),
      };
    });

    for (const [path, kind] of [
      ['/api/chat', 'chat'],
      ['/api/generate', 'generate'],
    ] as const) {
      scope.post(path, async (request, reply) => {
        const body =
          kind === 'chat' ? parseBody(ollamaChatSchema, request.body) : parseBody(ollamaGenerateSchema, request.body);
        const clock = clockFor(body.model);
        const keepAlive = parseKeepAlive(body.keep_alive);
        const asChat = kind === 'chat' || generateCarriesImages(body);
        const endpoint = asChat ? 'chat' : 'completion';
        if (isLoadCall(kind, body)) {
          const reason = await models.loadCall(endpoint, body.model, keepAlive, body);
          return loadCallAnswer(kind, body.model, reason, clock);
        }
        checkNumCtx(body.options, body.model, models.localConfigs(body.model)[0]?.config.contextsize ?? null);
        const json =
          kind === 'chat'
            ? ollamaChatToOpenAI(body)
            : asChat
              ? ollamaGenerateAsChat(body)
              : ollamaGenerateToOpenAI(body);
        models.keepAlive(body.model, keepAlive);
        const out = await deps.executor
          .run({
            endpoint,
            model: body.model,
            json,
            readsBody: true,
            stream: json.stream === true,
            client: clientGone(reply),
            promptBytes: rawBytes(request),
          })
          .catch((err: unknown) => {
            throw asOllamaParam(err);
          });
        answerHeaders(reply, out);
        const model = out.modelId;
        if (out.kind === 'sse')
          return writeStream(
            request,
            reply,
            openAIStreamToOllama(eachEvent(out.events), kind, model, clock),
            'ndjson',
            out.close,
            deps.writeTimeoutMs,
          );
        if (out.status >= 400 || out.kind !== 'json') return reply.status(out.status).send({ error: errorText(out) });
        return kind === 'chat'
          ? openAIChatToOllama(out.body as object, model, clock)
          : openAICompletionToOllama(out.body as object, model, clock);
      });
    }

    const embed = (legacy: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const body = parseBody(ollamaEmbedSchema, request.body);
      const clock = clockFor(body.model);
      models.keepAlive(body.model, parseKeepAlive(body.keep_alive));
      const out = await deps.executor.run({
        endpoint: 'embedding',
        model: body.model,
        json: ollamaEmbedToOpenAI(body),
        readsBody: true,
        stream: false,
        client: clientGone(reply),
        promptBytes: rawBytes(request),
      });
      answerHeaders(reply, out);
      if (out.status >= 400 || out.kind !== 'json') return reply.status(out.status).send({ error: errorText(out) });
      const result = openAIEmbeddingsToOllama(out.body as object, out.modelId, clock);
      return legacy ? { embedding: (result.embeddings as number[][])[0] ?? [] } : result;
    };
    scope.post('/api/embed', embed(false));
    scope.post('/api/embeddings', embed(true));

    for (const [method, path] of MANAGED_ELSEWHERE) {
      scope.route({
        method,
        url: path,
        handler: async () => {
          throw new RouterError(
            501,
            'not_supported',
            `${path} is not supported: models on this node are managed through model configs (one YAML file per model in models.config_dir), not through the Ollama API`,
          );
        },
      });
    }
  });
}

function errorText(out: { kind: string; body?: unknown }): string {
  const b = out.body as { error?: { message?: string } } | string | undefined;
  return typeof b === 'string' ? b : (b?.error?.message ?? 'engine error');
}

/** A refused OpenAI parameter is named as the Ollama client sent it (`format`, not `response_format`). */
const OLLAMA_PARAM: Record<string, string> = { response_format: 'format' };
function asOllamaParam(err: unknown): unknown {
  if (!(err instanceof RouterError) || !err.param || !OLLAMA_PARAM[err.param]) return err;
  const param = OLLAMA_PARAM[err.param];
  return new RouterError(
    err.status,
    err.code,
    err.message.replace(new RegExp(`^${err.param}\\b`), param),
    err.type,
    param,
    err.extra,
  );
}
