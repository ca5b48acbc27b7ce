/** The router's error: HTTP status plus a stable code; `/v1/*` shows it OpenAI-shaped, `/api/*` Ollama-shaped. Plain JS (the renderer may import it). */
export class RouterError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type: string = status >= 500 ? 'server_error' : 'invalid_request_error',
    readonly param: string | null = null,
    /** Machine-readable extras shown in the error object (e.g. the `reason` of offload_returned). */
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}
