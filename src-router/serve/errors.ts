import { EngineError } from '../backends';

/** An error with its HTTP status and a stable code; `/v1/*` shows it OpenAI-shaped, `/api/*` Ollama-shaped. */
export class RouterError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type: string = status >= 500 ? 'server_error' : 'invalid_request_error',
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export const modelNotFound = (model: string) => new RouterError(404, 'model_not_found', `The model '${model}' does not exist on this node`, 'invalid_request_error', 'model');
export const badRequest = (message: string, param: string | null = null) => new RouterError(400, 'invalid_request', message, 'invalid_request_error', param);

export function asRouterError(err: unknown): RouterError {
  if (err instanceof RouterError) return err;
  if (err instanceof EngineError) return new RouterError(err.status, err.code, err.message, err.status >= 500 ? 'server_error' : 'invalid_request_error');
  return new RouterError(500, 'internal_error', 'internal error in the router');
}
