import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { goneOf } from '../backends/call-end';
import { chatRequestSchema, completionRequestSchema, embeddingRequestSchema, imageRequestSchema } from '../contract';
import { NODE_HEADER, QUEUE_COMMENTS_HEADER, QUEUE_MS_HEADER } from '../contract/answer-facts';
import type { Endpoint } from '../engines';
import { servable } from '../registry/servable';
import { badRequest, modelNotFound, type ServeInput, type ServeOutput, type TranscriptionUpload } from '../serve';
import { GUARDIAN_FOR_HEADER } from '../serve/guardian-route';
import { answerHeaders } from './answer-headers';
import { clientGone } from './client-gone';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';
import { QueueNotice } from './queue-notice';
import { inBand, openStream, type StreamFormat, writeStream } from './streaming';

/**
 * The OpenAI-compatible client API under /v1. Registered a second time under /router/v1/node/worker for a master's
 * forwarded requests (`worker`): same shapes, the model named by its local ID on this node, never forwarded again.
 */
export async function openaiRoutes(
  app: FastifyInstance,
  deps: HttpDeps,
  opts: { worker?: boolean } = {},
): Promise<void> {
  const worker = opts.worker === true;

  /** The OpenAI model objects this node serves. A recipe name routes before the catalog (ASSET-4): it is listed once, as the recipe. */
  const models = () => {
    const recipes = worker ? [] : deps.assets.recipes.list();
    const names = new Set(recipes.map((r) => r.name));
    const created = Math.floor(deps.startedAt.getTime() / 1000);
    return [
      ...deps.catalog
        .all()
        .filter((e) => !names.has(e.id) && servable(e))
        .map((e) => ({ id: e.id, object: 'model', created, owned_by: e.replicas.map((r) => r.nodeId).join(',') })),
      ...deps.staticRouteIds
        .filter((id) => !deps.catalog.get(id) && !names.has(id))
        .map((id) => ({ id, object: 'model', created, owned_by: 'static' })),
      ...recipes.map((r) => ({
        id: r.name,
        object: 'model',
        created: Math.floor(r.updatedAt / 1000),
        owned_by: [...new Set(r.components.map((c) => c.nodeId))].join(','),
      })),
    ];
  };
  app.get('/v1/models', async () => ({ object: 'list', data: models() }));
  // A wildcard: model IDs may hold a slash (`org/model`).
  app.get<{ Params: { '*': string } }>('/v1/models/*', async (request) => {
    const id = request.params['*'];
    const found = models().find((m) => m.id === id);
    if (!found) throw modelNotFound(id);
    return found;
  });

  const jsonEndpoint = (
    path: string,
    endpoint: Endpoint,
    schema:
      | typeof chatRequestSchema
      | typeof completionRequestSchema
      | typeof embeddingRequestSchema
      | typeof imageRequestSchema,
  ) =>
    app.post(path, async (request, reply) => {
      const body = parseBody(schema, request.body) as Record<string, unknown> & { model: string };
      const stream = (endpoint === 'chat' || endpoint === 'completion') && body.stream === true;
      const lent = borrowed(request, worker);
      // A borrowed request runs on even if its relay connection drops (a master that died): its answer is kept for
      // the owner to fetch; the master cancels it explicitly when the owner's client leaves.
      const client =
        lent.requestId && deps.lendingHttp?.lending
          ? goneOf(deps.lendingHttp.lending.borrowedSignal(lent.requestId))
          : clientGone(reply);
      // A worker call's stream sends comments only when the master asks: an older master reads where it
      // ran and its queue time from the head, so that head waits for the answer.
      const notice =
        stream && (!worker || request.headers[QUEUE_COMMENTS_HEADER] === '1')
          ? queueNotice(reply, 'sse', deps.nodeId)
          : undefined;
      return runStreamed(request, reply, notice, 'sse', deps.writeTimeoutMs, () =>
        deps.executor.run({
          endpoint,
          model: body.model,
          json: body,
          rawJson: request.rawJson ?? undefined,
          stream,
          client,
          promptBytes: rawBytes(request),
          worker,
          ...lent,
          ...guardianCall(request, worker),
          onQueued: notice?.waiting,
        }),
      );
    });

  jsonEndpoint('/v1/chat/completions', 'chat', chatRequestSchema);
  jsonEndpoint('/v1/completions', 'completion', completionRequestSchema);
  jsonEndpoint('/v1/embeddings', 'embedding', embeddingRequestSchema);
  jsonEndpoint('/v1/images/generations', 'image', imageRequestSchema);

  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const upload = await readUpload(request);
    const model = upload.fields.model ?? '';
    const out = await deps.executor.run({
      endpoint: 'transcription',
      model,
      upload,
      stream: false,
      client: clientGone(reply),
      worker,
    });
    return send(request, reply, out, deps.writeTimeoutMs);
  });
}

/** A master relaying a lent request names its owner (LEASE-5); only worker calls may carry it. */
function borrowed(request: FastifyRequest, worker: boolean) {
  const from = worker ? request.headers['x-routerdesk-borrowed-from'] : undefined;
  if (typeof from !== 'string' || !from.includes('/')) return {};
  const i = from.indexOf('/');
  const id = request.headers['x-routerdesk-request-id'];
  return {
    borrowedFrom: { nodeId: from.slice(0, i), model: from.slice(i + 1) },
    requestId: typeof id === 'string' ? id : undefined,
  };
}

/** GUARD-2: a worker call from the node that routed an image request to this node's guardian names the model it answers for. */
function guardianCall(request: FastifyRequest, worker: boolean): { guardian?: NonNullable<ServeInput['guardian']> } {
  const h = worker ? request.headers[GUARDIAN_FOR_HEADER] : undefined;
  const m = typeof h === 'string' ? /^(detected|engine_refused) ([^/\s]+)\/(\S+)$/.exec(h) : null;
  return m ? { guardian: { reason: m[1] as 'detected' | 'engine_refused', for: { nodeId: m[2], model: m[3] } } } : {};
}

export function rawBytes(request: FastifyRequest): number {
  return Number(request.headers['content-length'] ?? 0) || Buffer.byteLength(JSON.stringify(request.body ?? ''));
}

async function readUpload(request: FastifyRequest): Promise<TranscriptionUpload> {
  if (!request.isMultipart()) throw badRequest('expected a multipart/form-data body with `file` and `model`');
  const fields: Record<string, string> = {};
  let file: TranscriptionUpload | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') {
        part.file.resume();
        continue;
      }
      file = { file: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype, fields };
    } else if (typeof part.value === 'string') {
      fields[part.fieldname] = part.value;
    }
  }
  if (!file) throw badRequest('file: a form field `file` with the audio is required', 'file');
  return { ...file, fields };
}

export async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  out: ServeOutput,
  writeTimeoutMs: number,
  format: StreamFormat = 'sse',
): Promise<FastifyReply | void> {
  const trailers = answerHeaders(reply, out);
  if (out.kind === 'sse') return writeStream(request, reply, out.events, format, out.close, writeTimeoutMs, trailers);
  // A stream whose head went out with its queue comments: whatever the answer, it is written in-band.
  if (reply.raw.headersSent)
    return writeStream(request, reply, inBand(out), format, () => {}, writeTimeoutMs, trailers);
  if (out.kind === 'text') return reply.status(out.status).type(out.contentType).send(out.body);
  // The engine's own bytes when the model ID could be rewritten in them: not serialised again.
  if (out.text !== undefined) return reply.status(out.status).type('application/json; charset=utf-8').send(out.text);
  return reply.status(out.status).send(out.body);
}

/**
 * The queue comments of a streamed request (SSE formats); its head names the node whose queue holds it
 * (this one, or the slave a forwarded stream waits on), its queue time comes as a trailer.
 */
export function queueNotice(reply: FastifyReply, format: Exclude<StreamFormat, 'ndjson'>, nodeId: string): QueueNotice {
  return new QueueNotice(reply, (node) =>
    openStream(reply, format, { [NODE_HEADER]: node ?? nodeId, trailer: QUEUE_MS_HEADER }),
  );
}

/**
 * Runs a request whose stream may send queue comments meanwhile, then sends its answer (`answer`, default `send`):
 * once the stream's head went out, a failure is written in-band instead of as an error response.
 */
export async function runStreamed(
  request: FastifyRequest,
  reply: FastifyReply,
  notice: QueueNotice | undefined,
  format: StreamFormat,
  writeTimeoutMs: number,
  run: () => Promise<ServeOutput>,
  answer: (out: ServeOutput) => Promise<unknown> = (out) => send(request, reply, out, writeTimeoutMs, format),
): Promise<unknown> {
  let out: ServeOutput;
  try {
    out = await run();
  } catch (err) {
    if (!notice?.started) throw err;
    return writeStream(request, reply, inBand({ error: err }), format, () => {}, writeTimeoutMs);
  } finally {
    notice?.stop();
  }
  return answer(out);
}
