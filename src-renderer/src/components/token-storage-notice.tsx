import type { TokenStorage } from '../../../src-router/contract/token-storage';
import { windowTokenStorage } from '../token-storage';

/** One line on how remote clusters' tokens are kept at rest: a warning where they are not encrypted. */
export function TokenStorageNotice({ storage = windowTokenStorage() }: { storage?: TokenStorage | null }) {
  if (!storage) return null;
  return (
    <p
      className={storage.sealed ? 'muted small' : 'notice notice-error small'}
      data-testid="token-storage"
      data-sealed={String(storage.sealed)}
      role={storage.sealed ? undefined : 'status'}
    >
      {storage.how}
    </p>
  );
}
