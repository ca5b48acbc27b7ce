/**
 * How a remote cluster's console token is kept at rest (UI-5). Headless, the token is stored as given in a store file
 * only its owner can read; the desktop app seals it with the operating system's keychain (Electron `safeStorage`)
 * where that is available, and passes its sealer to the node.
 */
export type TokenSealing = 'plain' | 'safe-storage';

export interface TokenSealer {
  kind: TokenSealing;
  seal(token: string): string;
  unseal(stored: string): string;
}

export const plainSealer: TokenSealer = { kind: 'plain', seal: (t) => t, unseal: (s) => s };
