import { type TokenStorage, tokenStorageSchema } from '../../src-router/contract/token-storage';
import type { PreloadBridge } from './connection';

/**
 * How remote clusters' tokens are kept at rest, as the desktop app's preload says; null in a plain browser (the
 * page cannot know how the node it talks to keeps them, so it claims nothing) or when the bridge's value is malformed.
 */
export function bridgeTokenStorage(bridge: PreloadBridge | null | undefined): TokenStorage | null {
  const parsed = tokenStorageSchema.safeParse(bridge?.tokenStorage);
  return parsed.success ? parsed.data : null;
}

/** The real window's bridge (none outside a browser). */
export function windowTokenStorage(): TokenStorage | null {
  return bridgeTokenStorage(typeof window === 'undefined' ? null : window.routerdesk);
}
