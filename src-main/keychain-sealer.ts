import type { TokenSealer } from '../src-router/cluster/profiles/token-sealing';

/** What the sealer needs of Electron's `safeStorage` (passed in: this file is unit-tested without Electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(sealed: Buffer): string;
}

/**
 * UI-5: remote clusters' console tokens sealed with the operating system's keychain (Electron `safeStorage`: Keychain
 * on macOS, DPAPI on Windows, the secret service on Linux). Undefined where no keychain is available: the node then
 * keeps tokens as given, in a store file only its owner can read.
 */
export function keychainSealer(safeStorage: SafeStorageLike): TokenSealer | undefined {
  if (!safeStorage.isEncryptionAvailable()) return undefined;
  return {
    kind: 'safe-storage',
    seal: (token) => safeStorage.encryptString(token).toString('base64'),
    unseal: (stored) => safeStorage.decryptString(Buffer.from(stored, 'base64')),
  };
}
