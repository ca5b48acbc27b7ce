import type { FastifyInstance } from 'fastify';
import { chatCompletionAnswerSchema, RouterError, responsesRequestSchema } from '../contract';
import { chatStreamToResponses, chatToResponse, RESPONSES_PARAM, responsesToChat } from '../serve';
import { eachEvent } from '../serve/event-batch';
import { answerHeaders } from './answer-headers';
import { clientGone } from './client-gone';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';
import { queueNotice, rawBytes, runStreamed, send } from './openai-routes';
import { writeStream } from './streaming';

/**
 * OpenAI's Responses API for text models: the request is translated to a chat completion and run exactly as one
 * (endpoint `chat`: routed, queued and lent like any chat request); the answer is translated back.
 */
export async function responsesRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.post('/v1/responses', async (request, reply) => {
    const body = parseBody(responsesRequestSchema, request.body);
    const json = responsesToChat(body);
    const stream = body.stream === true;
    const notice = stream ? queueNotice(reply, 'sse-events', deps.nodeId) : undefined;
    const run = () =>
      deps.executor
        .run({
          endpoint: 'chat',
          model: body.model,
          json,
          readsBody: true,
          stream,
          client: clientGone(reply),
          promptBytes: rawBytes(request),
          onQueued: notice?.waiting,
        })
        .catch((err: unknown) => {
          throw asResponsesError(err);
        });
    return runStreamed(request, reply, notice, 'sse-events', deps.writeTimeoutMs, run, async (out) => {
      const trailers = answerHeaders(reply, out);
      if (out.kind === 'sse')
        return writeStream(
          request,
          reply,
          chatStreamToResponses(eachEvent(out.events), body, out.modelId),
          'sse-events',
          out.close,
          deps.writeTimeoutMs,
          trailers,
        );
      // Errors are already OpenAI-shaped (the engine's, relayed with the model named); anything not JSON is passed on.
      if (out.kind !== 'json' || out.status >= 400) return send(request, reply, out, deps.writeTimeoutMs, 'sse-events');
      const answer = chatCompletionAnswerSchema.safeParse(out.body);
      if (!answer.success)
        throw new RouterError(
          502,
          'engine_bad_response',
          `the engine for '${out.modelId}' answered a chat completion without choices`,
        );
      return chatToResponse(body, answer.data, out.modelId);
    });
  });
}

/** A refusal of a chat parameter names the Responses parameter the client sent (`text.format`, not `response_format`). */
function asResponsesError(err: unknown): unknown {
  if (!(err instanceof RouterError) || !err.param || !RESPONSES_PARAM[err.param]) return err;
  const param = RESPONSES_PARAM[err.param];
  return new RouterError(
    err.status,
    err.code,
    err.message.replace(new RegExp(`^${err.param}\\b`), param),
    err.type,
    param,
    err.extra,
  );
}
