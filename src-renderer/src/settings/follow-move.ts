import type { FetchLike } from '../api/console-client';
import { RESTART_POLL_MS, RESTART_TIMEOUT_MS } from './restart-wait';

/**
 * After a Settings save that moves the node to another address (a new port): this page's origin is the old address,
 * the only one its content policy lets it call, and the token it keeps belongs to that origin. The node leaves a
 * redirect at the old address once it listens at the new one; so the page polls its own `/health` without following
 * redirects, and at the first redirect goes to the new address with the one-time code the save answered, which the
 * page there exchanges for the token. False when the node did not come back within the bounded wait. Tested in
 * renderer-follow-move.test.ts.
 */
export interface FollowMoveOptions {
  /** The old address (this page's origin). */
  from: string;
  /** Where the node listens now. */
  to: string;
  code: string;
  fetch: FetchLike;
  navigate(href: string): void;
  now(): number;
  sleep(ms: number): Promise<void>;
  timeoutMs?: number;
  everyMs?: number;
}

/** The console at the new address, opened with the one-time code, on the Settings screen. */
export const movedLink = (to: string, code: string) =>
  `${to.replace(/\/+$/, '')}/?code=${encodeURIComponent(code)}#settings`;

export async function followMove(o: FollowMoveOptions): Promise<boolean> {
  const deadline = o.now() + (o.timeoutMs ?? RESTART_TIMEOUT_MS);
  for (;;) {
    const moved = await o.fetch(`${o.from.replace(/\/+$/, '')}/health`, { redirect: 'manual', cache: 'no-store' }).then(
      (res) => res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400),
      () => false,
    );
    if (moved) {
      o.navigate(movedLink(o.to, o.code));
      return true;
    }
    if (o.now() >= deadline) return false;
    await o.sleep(o.everyMs ?? RESTART_POLL_MS);
  }
}
