import { createHash } from 'node:crypto';

/**
 * Which pod served which prompt prefix, as the router observed it (prefix-affinity). Bounded: past `capacity`
 * entries the least recently used one goes. A Map keeps insertion order, so re-inserting on use is the LRU.
 */
export class PrefixTable {
  private readonly entries = new Map<string, string>();

  constructor(readonly capacity = 10_000) {
    if (!(capacity >= 1)) throw new RangeError('PrefixTable capacity must be at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The pod that last served `key`, marking the entry recently used. */
  get(key: string): string | undefined {
    const pod = this.entries.get(key);
    if (pod !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, pod);
    }
    return pod;
  }

  /** Looks without touching the LRU order. */
  peek(key: string): string | undefined {
    return this.entries.get(key);
  }

  remember(key: string, podId: string): void {
    this.entries.delete(key);
    this.entries.set(key, podId);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops every prefix a pod held (the pod went away). */
  forgetPod(podId: string): void {
    for (const [k, p] of this.entries) if (p === podId) this.entries.delete(k);
  }
}

/** Characters of the prompt that make its prefix. */
export const PREFIX_CHARS = 512;

/**
 * The prefix hash of a client request body: the first `chars` characters of its chat messages (role and text) or
 * its prompt, sha256, hex. Undefined when the body has no prompt text.
 */
export function promptPrefixHash(body: Record<string, unknown> | undefined, chars = PREFIX_CHARS): string | undefined {
  const text = promptText(body, chars);
  if (!text) return undefined;
  return createHash('sha256').update(text.slice(0, chars)).digest('hex');
}

function promptText(body: Record<string, unknown> | undefined, chars: number): string {
  if (!body) return '';
  if (typeof body.prompt === 'string') return body.prompt;
  if (Array.isArray(body.prompt) && typeof body.prompt[0] === 'string') return body.prompt[0];
  if (!Array.isArray(body.messages)) return '';
  let out = '';
  for (const m of body.messages as unknown[]) {
    if (!m || typeof m !== 'object') continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    out += `${typeof role === 'string' ? role : ''}\u0000${contentText(content)}\u0001`;
    if (out.length >= chars) break;
  }
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) =>
      p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
        ? (p as { text: string }).text
        : '',
    )
    .join('');
}
