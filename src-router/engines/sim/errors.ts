import type { FastifyReply } from 'fastify';

/** OpenAI-shaped error body, as llama-server writes it. */
export function errorBody(
  status: number,
  message: string,
  type = status >= 500 ? 'server_error' : 'invalid_request_error',
) {
  return { error: { code: status, message, type } };
}

export function sendError(reply: FastifyReply, status: number, message: string, type?: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(errorBody(status, message, type));
}

/** The body of every endpoint but /metrics and /sim/stats while the model loads. */
export const LOADING_BODY = { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } } as const;

/** whisper.cpp's server answers this way while it loads. */
export const WHISPER_LOADING_BODY = { status: 'loading model' } as const;

/** llama-server's words when a chat carries an image and no projector (mmproj) is loaded. */
export const IMAGE_NOT_SUPPORTED_MESSAGE =
  'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj';

/**
 * How the sim refuses image input (a model without `--vision`, or `fail: image_not_supported`): at 500 exactly
 * llama-server's body (`reference/llama-server/image-refused.json`); at 400 the same message as a client error.
 */
export const imageRefusalBody = (status: 400 | 500) => errorBody(status, IMAGE_NOT_SUPPORTED_MESSAGE);

export const INJECTED_FAILURE_MESSAGE = 'sim: injected failure';

/** Thrown inside a job when the simulated process crashed (in-process mode only; a real process has exited). */
export class SimCrashedError extends Error {
  readonly code = 'sim_crashed';
}
