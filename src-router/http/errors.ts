import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { peerRead } from '../contract/peer-read';
import { asRouterError, RouterError } from '../serve';
import { redactUrl } from './redact';
import { routePath, targetPath } from './route-path';

/** Fastify's own errors (parsing, limits) as router errors with a clear message. */
function fromFastify(err: FastifyError): RouterError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RouterError(400, 'invalid_json', `request body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
      return new RouterError(413, 'body_too_large', `request body is larger than the limit: ${err.message}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RouterError(415, 'unsupported_media_type', err.message);
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new RouterError(400, 'invalid_multipart', 'expected a multipart/form-data body');
  }
  if (err instanceof SyntaxError)
    return new RouterError(400, 'invalid_json', `request body is not valid JSON: ${err.message}`);
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)
    return new RouterError(err.statusCode, 'bad_request', err.message);
  return undefined;
}

export function toRouterError(err: unknown): RouterError {
  if (err instanceof RouterError) return err;
  const fromF = err && typeof err === 'object' && 'code' in err ? fromFastify(err as FastifyError) : undefined;
  return fromF ?? asRouterError(err);
}

/** The wire shape of an error for this path: OpenAI's on `/v1/*` and the router's APIs, Ollama's on `/api/*`. */
export function errorPayload(url: string, e: RouterError): unknown {
  if (url.startsWith('/api/')) return { error: e.message };
  return { error: { message: e.message, type: e.type, param: e.param, code: e.code, ...e.extra } };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const e = toRouterError(err);
  const level = e.status >= 500 ? 'error' : 'warn';
  request.log[level](
    {
      status: e.status,
      code: e.code,
      url: redactUrl(request.url),
      err: e.status >= 500 && !(err instanceof RouterError) ? err : undefined,
    },
    e.message,
  );
  if (reply.raw.headersSent) {
    reply.raw.destroy();
    return reply;
  }
  if (e.extra.retry_after) reply.header('retry-after', e.extra.retry_after);
  return reply.status(e.status === 499 ? 400 : e.status).send(errorPayload(routePath(request), e));
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new RouterError(404, 'not_found', `no route ${request.method} ${targetPath(request.url)}`),
    ),
  );
}

/**
 * A node API body another node sent (a push, an event, a relay, a registration): parsed with `peerRead`, so a newer
 * peer's extra fields are stripped and every known one is still checked.
 */
export function parsePeerBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  return parseBody(peerRead(schema), body);
}

/** Parses a body with a zod schema; the first problem becomes a 400 naming the field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body))
    throw new RouterError(400, 'invalid_request', 'request body must be a JSON object');
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = issue.path.map(String).join('.') || null;
  throw new RouterError(
    400,
    'invalid_request',
    param ? `${param}: ${issue.message}` : issue.message,
    'invalid_request_error',
    param,
  );
}
