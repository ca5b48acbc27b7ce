/**
 * A test hook of the sim engine: the last requests it received, each with the head of its prompt text and how it
 * went, so a fault-injection run can tell which engine saw (and ran) which request (`GET /sim/seen`). Bounded: the
 * last `capacity` requests, `headChars` characters of each prompt.
 */

/** queued: waiting for a slot; running: holds one; then how it ended. */
export type SeenState = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';

export interface SeenEntry {
  /** 1-based arrival number at this engine. */
  n: number;
  /** Unix ms of arrival. */
  at: number;
  /** The first `headChars` characters of the prompt text (chat: `role: content` lines). */
  head: string;
  state: SeenState;
  /** It got a slot (it ran, whatever its end). */
  started: boolean;
  /** Unix ms it got its slot and it ended (null until then). */
  startedAt: number | null;
  endedAt: number | null;
}

export const SEEN_CAPACITY = 10_000;
export const SEEN_HEAD_CHARS = 160;

export class SeenRing {
  private readonly ring: SeenEntry[] = [];
  private next = 0;
  total = 0;

  constructor(
    readonly capacity = SEEN_CAPACITY,
    private readonly headChars = SEEN_HEAD_CHARS,
  ) {}

  /** Records an arrival; the caller updates the entry's state as the request goes on. */
  add(prompt: string, at = Date.now()): SeenEntry {
    const entry: SeenEntry = {
      n: ++this.total,
      at,
      head: prompt.slice(0, this.headChars),
      state: 'queued',
      started: false,
      startedAt: null,
      endedAt: null,
    };
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    return entry;
  }

  /** Oldest first. */
  list(): SeenEntry[] {
    return this.ring.length < this.capacity
      ? [...this.ring]
      : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }
}
