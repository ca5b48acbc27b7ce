import { describe, expect, it } from 'vitest';
import { keychainSealer, type SafeStorageLike } from '../../src-main/keychain-sealer';
import { ProfileStore } from '../../src-router/cluster/profiles/profile-store';
import { openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// UI-5: profiles keep their tokens sealed at rest; the token comes out only to call the remote.
describe('connection profiles at rest', () => {
  /** Electron's safeStorage as the sealer sees it: a reversible seal that never stores the token as given. */
  const fakeKeychain = (available: boolean): SafeStorageLike => ({
    isEncryptionAvailable: () => available,
    encryptString: (p) => Buffer.from([...Buffer.from(p)].map((b) => b ^ 0x5a)),
    decryptString: (b) => Buffer.from([...b].map((x) => x ^ 0x5a)).toString(),
  });

  it('a keychain sealer is used where the keychain is available, and never stores the token as given', () => {
    expect(keychainSealer(fakeKeychain(false))).toBeUndefined();
    const db = openStore(tempDir());
    const store = new ProfileStore(db, keychainSealer(fakeKeychain(true)));
    const p = store.create({ name: 'gpu-farm', url: 'http://10.0.0.5:8080', token: 'secret-token-123' });
    expect(p.sealing).toBe('safe-storage');
    const raw = db.prepare('SELECT token FROM cluster_profiles').get() as { token: string };
    expect(raw.token).not.toContain('secret-token-123');
    expect(store.token(p.id)).toBe('secret-token-123');
    expect(JSON.stringify(store.list())).not.toContain('secret');
    // Read headless (no keychain): the node says it cannot, rather than sending garbage.
    expect(() => new ProfileStore(db).token(p.id)).toThrow(/sealed by the desktop app's keychain/);
  });

  it('names are unique; a changed token is sealed again; delete forgets it', () => {
    const db = openStore(tempDir());
    const store = new ProfileStore(db);
    const a = store.create({ name: 'a', url: 'http://a:1', token: 't1' });
    expect(() => store.create({ name: 'a', url: 'http://b:1', token: 't2' })).toThrow(/already exists/);
    store.update(a.id, { token: 't3' });
    expect(store.token(a.id)).toBe('t3');
    expect(store.delete(a.id)).toBe(true);
    expect(store.list()).toEqual([]);
  });
});
