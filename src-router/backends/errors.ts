/** Errors of the engine machinery; the HTTP layer maps `status` and `code` onto the wire. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export const engineStartFailed = (model: string, reason: string) =>
  new EngineError(`engine for model '${model}' failed to start: ${reason}`, 503, 'engine_start_failed');
export const engineHeld = (model: string, reason: string, retryMs: number) =>
  new EngineError(
    `engine for model '${model}' is held after repeated failed starts (retry in ${Math.ceil(retryMs / 1000)} s): ${reason}`,
    503,
    'engine_unavailable',
  );
export const modelUnavailable = (model: string, why: string) =>
  new EngineError(`model '${model}' is not available: ${why}`, 503, 'model_unavailable');
