import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** A JSON body as the client sent it (forwarded as received, its model renamed in place). */
    rawJson: string | null;
  }
}

/**
 * JSON bodies are parsed by fastify's own parser (prototype and constructor poisoning refused, an empty body a
 * clear error) and their text is kept on the request, so the request path can pass a body on as the client sent
 * it instead of serialising the parsed object again.
 */
export function keepRawJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('rawJson', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      // A byte-order mark is dropped, as the parser drops it: engines in Go or Python refuse one.
      request.rawJson = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      parse(request, text, done);
    },
  );
}
