import type { TokenStorage } from '../src-router/contract/token-storage';

/** What Electron's `safeStorage` says of itself (the backend only on Linux: `getSelectedStorageBackend()`). */
export interface SafeStorageFacts {
  platform: string;
  encryptionAvailable: boolean;
  backend: string | null;
}

/** Linux keyrings that encrypt with a secret kept by the desktop session. */
const LINUX_KEYRINGS = new Set(['gnome_libsecret', 'kwallet', 'kwallet5', 'kwallet6']);

/**
 * Whether remote clusters' tokens are really encrypted at rest, and how, in a sentence. Without encryption the
 * sealer is not used and tokens are kept as given; on Linux, safeStorage's `basic_text` backend (no keyring found)
 * encrypts with a key built into Chromium: obfuscation, not encryption. An unknown backend is not taken as sealed.
 */
export function tokenStorageOf(f: SafeStorageFacts): TokenStorage {
  if (!f.encryptionAvailable) {
    return {
      sealed: false,
      how: "Remote clusters' tokens are stored as given, not encrypted (in the node's store, readable by your user only): no OS keychain is available",
    };
  }
  if (f.platform === 'linux') {
    if (f.backend === 'basic_text')
      return {
        sealed: false,
        how: "Remote clusters' tokens are stored obfuscated, not encrypted: no OS keyring was found (basic_text)",
      };
    if (!f.backend || !LINUX_KEYRINGS.has(f.backend)) {
      return {
        sealed: false,
        how: `Remote clusters' tokens are stored obfuscated, not known to be encrypted: the OS keyring in use is not known (${f.backend ?? 'none reported'})`,
      };
    }
    return { sealed: true, how: `Remote clusters' tokens are encrypted with the OS keyring (${f.backend})` };
  }
  if (f.platform === 'darwin')
    return { sealed: true, how: "Remote clusters' tokens are encrypted with the macOS Keychain" };
  if (f.platform === 'win32')
    return { sealed: true, how: "Remote clusters' tokens are encrypted with Windows DPAPI (your user account)" };
  return { sealed: true, how: "Remote clusters' tokens are encrypted with the OS keychain" };
}
