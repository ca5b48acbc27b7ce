import { EngineError } from '../backends';
import type { AnswerTooLarge } from '../backends/answer-limits';
import { RouterError } from '../contract';

export { RouterError };

export const modelNotFound = (model: string) =>
  new RouterError(
    404,
    'model_not_found',
    `The model '${model}' does not exist on this node`,
    'invalid_request_error',
    'model',
  );
export const badRequest = (message: string, param: string | null = null) =>
  new RouterError(400, 'invalid_request', message, 'invalid_request_error', param);

export function asRouterError(err: unknown): RouterError {
  if (err instanceof RouterError) return err;
  if (err instanceof EngineError)
    return new RouterError(
      err.status,
      err.code,
      err.message,
      err.status >= 500 ? 'server_error' : 'invalid_request_error',
    );
  return new RouterError(500, 'internal_error', 'internal error in the router');
}

/** An answer past its bound as the client's 502, naming who sent it (`engine for model 'x'`, `node 'n'`). */
export function tooLarge(err: AnswerTooLarge, who: string): RouterError {
  return new RouterError(502, 'answer_too_large', `${who} ${err.message}`);
}
