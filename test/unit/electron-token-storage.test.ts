import { describe, expect, it } from 'vitest';
import { tokenStorageOf } from '../../src-main/token-storage';
import { tokenStorageSchema } from '../../src-router/contract/token-storage';

// Item 12: the desktop app claims remote clusters' tokens are sealed only where the OS keychain encrypts them.
describe('item 12: token sealing as the desktop app states it (safeStorage facts → sealed or not)', () => {
  it('Linux with no keyring (basic_text): obfuscated, not encrypted, said so', () => {
    const s = tokenStorageOf({ platform: 'linux', encryptionAvailable: true, backend: 'basic_text' });
    expect(s).toEqual({
      sealed: false,
      how: "Remote clusters' tokens are stored obfuscated, not encrypted: no OS keyring was found (basic_text)",
    });
  });

  it('no encryption available (any platform): stored as given, not sealed', () => {
    for (const platform of ['linux', 'darwin', 'win32']) {
      const s = tokenStorageOf({
        platform,
        encryptionAvailable: false,
        backend: platform === 'linux' ? 'gnome_libsecret' : null,
      });
      expect(s.sealed).toBe(false);
      expect(s.how).toMatch(/stored as given, not encrypted.*no OS keychain is available/);
    }
  });

  it('Linux with an unknown or unreported backend is not taken as sealed', () => {
    expect(tokenStorageOf({ platform: 'linux', encryptionAvailable: true, backend: 'unknown' })).toMatchObject({
      sealed: false,
      how: expect.stringContaining('(unknown)'),
    });
    expect(tokenStorageOf({ platform: 'linux', encryptionAvailable: true, backend: null })).toMatchObject({
      sealed: false,
    });
  });

  it('a real keyring or keychain: sealed, naming it', () => {
    for (const backend of ['gnome_libsecret', 'kwallet', 'kwallet5', 'kwallet6']) {
      expect(tokenStorageOf({ platform: 'linux', encryptionAvailable: true, backend })).toEqual({
        sealed: true,
        how: `Remote clusters' tokens are encrypted with the OS keyring (${backend})`,
      });
    }
    expect(tokenStorageOf({ platform: 'darwin', encryptionAvailable: true, backend: null })).toMatchObject({
      sealed: true,
      how: expect.stringContaining('macOS Keychain'),
    });
    expect(tokenStorageOf({ platform: 'win32', encryptionAvailable: true, backend: null })).toMatchObject({
      sealed: true,
      how: expect.stringContaining('DPAPI'),
    });
  });

  it('every answer is what the renderer accepts over the bridge', () => {
    for (const backend of ['basic_text', 'gnome_libsecret', 'unknown', null]) {
      for (const encryptionAvailable of [true, false])
        expect(
          tokenStorageSchema.safeParse(tokenStorageOf({ platform: 'linux', encryptionAvailable, backend })).success,
        ).toBe(true);
    }
  });
});
