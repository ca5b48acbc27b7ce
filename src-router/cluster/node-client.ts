import type { z } from 'zod';
import { AnswerTooLarge, errorText, fetchAnswer, sizeText, VIEW_LIMIT } from '../backends/answer-limits';
import {
  type NodeSnapshot,
  nodeSnapshotSchema,
  peerRead,
  type RuntimeStatus,
  registerResponseSchema,
  runtimeStatusSchema,
} from '../contract';
import { type RuntimeHealth, runtimeHealthSchema } from '../runtime';

/** The most of a snapshot a node reads from another: 256 records of the longest fields allowed take about 1 MiB. */
export const SNAPSHOT_LIMIT = 4 * 1024 * 1024;

/** A node-to-node call that failed: not reachable, refused (status), or answered something we cannot read. */
export class NodeCallError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** Node-to-node HTTP with the cluster token, bounded by a timeout, answers validated against the contract (`peerRead`: a newer peer's extra fields stripped). */
export class NodeClient {
  constructor(
    private readonly token: string,
    private readonly timeoutMs = 5000,
  ) {}

  private async call<T extends z.ZodType>(
    method: 'GET' | 'POST',
    url: string,
    schema: T,
    body?: unknown,
    limit = VIEW_LIMIT,
  ): Promise<z.output<T>> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      throw new NodeCallError(
        `${url}: ${(err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (cause?.code ?? (err as Error).message)}`,
        null,
      );
    }
    const answer = fetchAnswer(res);
    if (!res.ok) {
      const text = await errorText(answer);
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        /* keep text */
      }
      throw new NodeCallError(`${url}: ${res.status} ${message}`, res.status);
    }
    let text: string;
    try {
      text = await answer.text(limit);
    } catch (err) {
      throw new NodeCallError(
        `${url}: ${err instanceof AnswerTooLarge ? `answer over ${sizeText(limit)}; not read further` : (err as Error).message}`,
        res.status,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new NodeCallError(`${url}: answer is not JSON`, res.status);
    }
    const result = peerRead(schema).safeParse(parsed);
    if (!result.success)
      throw new NodeCallError(
        `${url}: unexpected answer (${result.error.issues[0]?.path.join('.')}: ${result.error.issues[0]?.message})`,
        res.status,
      );
    return result.data;
  }

  /** A member's snapshot, read up to `SNAPSHOT_LIMIT` (the member bounds' records fit many times over). */
  snapshot(baseUrl: string): Promise<NodeSnapshot> {
    return this.call('GET', `${baseUrl}/router/v1/node/snapshot`, nodeSnapshotSchema, undefined, SNAPSHOT_LIMIT);
  }

  register(masterUrl: string, snapshot: NodeSnapshot) {
    return this.call('POST', `${masterUrl}/router/v1/node/register`, registerResponseSchema, snapshot);
  }

  runtimeHealth(baseUrl: string): Promise<RuntimeHealth> {
    return this.call('GET', `${baseUrl}/router/v1/node/runtime-health`, runtimeHealthSchema);
  }

  runtimeStatus(baseUrl: string): Promise<RuntimeStatus> {
    return this.call('GET', `${baseUrl}/router/v1/node/runtime-status`, runtimeStatusSchema);
  }
}

/** URLs compare without a trailing slash. */
export const normalizeUrl = (url: string) => url.replace(/\/+$/, '');
