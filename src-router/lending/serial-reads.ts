/**
 * Reads of one thing at a peer, one at a time per key: a read asked while one runs waits for it to end and then
 * reads anew, and every ask in between shares that next read. So a flood of asks costs the peer at most one read at a
 * time per key, every caller gets an answer read after it asked, and answers come back in the order they were read.
 */
export class SerialReads<T> {
  private readonly running = new Map<string, Promise<T>>();
  private readonly waiting = new Map<string, Promise<T>>();

  constructor(private readonly read: (key: string) => Promise<T>) {}

  get(key: string): Promise<T> {
    const running = this.running.get(key);
    if (!running) {
      const p = this.read(key).finally(() => this.running.delete(key));
      this.running.set(key, p);
      return p;
    }
    let next = this.waiting.get(key);
    if (!next) {
      next = running
        .catch(() => undefined)
        .then(() => {
          this.waiting.delete(key);
          return this.get(key);
        });
      this.waiting.set(key, next);
    }
    return next;
  }
}
