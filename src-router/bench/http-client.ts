/**
 * A lean HTTP client for the benchmarks (node:http, keep-alive): the same client code measures the direct and the
 * routed path, so what it costs cancels out of the ratios.
 */
import { Agent, request } from 'node:http';

export interface CallResult {
  status: number;
  /** From sending the request to the first byte of the body. */
  firstByteMs: number;
  /** From sending the request to the end of the body. */
  totalMs: number;
  body: string;
}

export const keepAliveAgent = (maxSockets = 256) => new Agent({ keepAlive: true, maxSockets });

/** POSTs JSON and reads the whole answer; rejects on a network error or after `timeoutMs`. */
export function postJson(
  url: string,
  payload: unknown,
  agent: Agent,
  headers: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<CallResult> {
  const data = Buffer.from(JSON.stringify(payload));
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        let firstByteMs = -1;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (firstByteMs < 0) firstByteMs = performance.now() - t0;
          chunks.push(c);
        });
        res.on('end', () => {
          const totalMs = performance.now() - t0;
          resolve({
            status: res.statusCode ?? 0,
            firstByteMs: firstByteMs < 0 ? totalMs : firstByteMs,
            totalMs,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** GET returning parsed JSON; throws on a non-2xx status. */
export async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A chat completion body: one short user message, `maxTokens` tokens. */
export const chatBody = (model: string, maxTokens: number, stream = false) => ({
  model,
  messages: [{ role: 'user', content: 'hello there' }],
  max_tokens: maxTokens,
  stream,
});

/** Posts a chat completion and throws unless it is answered 200. */
export async function chat(
  baseUrl: string,
  model: string,
  agent: Agent,
  maxTokens: number,
  stream = false,
): Promise<CallResult> {
  const r = await postJson(`${baseUrl}/v1/chat/completions`, chatBody(model, maxTokens, stream), agent);
  if (r.status !== 200) throw new Error(`chat ${model} at ${baseUrl}: ${r.status} ${r.body.slice(0, 300)}`);
  if (stream && !r.body.includes('[DONE]')) throw new Error(`chat ${model} at ${baseUrl}: stream without [DONE]`);
  return r;
}
