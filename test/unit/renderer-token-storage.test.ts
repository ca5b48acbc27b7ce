import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleClient } from '../../src-renderer/src/api/console-client';
import { AddClusterDialog } from '../../src-renderer/src/components/clusters/add-cluster-dialog';
import { SettingsPage } from '../../src-renderer/src/components/settings/settings-page';
import { TokenStorageNotice } from '../../src-renderer/src/components/token-storage-notice';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import { createClustersStore } from '../../src-renderer/src/store/clusters-store';
import { AppStoreContext } from '../../src-renderer/src/store/use-app-store';
import { ClustersStoreContext } from '../../src-renderer/src/store/use-clusters-store';
import { bridgeTokenStorage } from '../../src-renderer/src/token-storage';

const BASIC_TEXT = {
  sealed: false,
  how: "Remote clusters' tokens are stored obfuscated, not encrypted: no OS keyring was found (basic_text)",
};
const KEYRING = { sealed: true, how: "Remote clusters' tokens are encrypted with the OS keyring (gnome_libsecret)" };
const noFetch = async (): Promise<Response> => new Response('{}', { status: 503 });

/** Renders with `window.routerdesk` as the desktop app's preload would set it (none: a plain browser). */
function withBridge(tokenStorage: unknown, render: () => string): string {
  const g = globalThis as { window?: unknown };
  g.window = { routerdesk: { url: 'http://node', token: 't', tokenStorage } };
  try {
    return render();
  } finally {
    delete g.window;
  }
}

function dialogMarkup(): string {
  const clusters = createClustersStore({ url: 'http://node', token: 't', fetch: noFetch, now: () => 0 });
  return renderToStaticMarkup(
    createElement(
      ClustersStoreContext.Provider,
      { value: clusters },
      createElement(AddClusterDialog, { onClose: () => {} }),
    ),
  );
}

function settingsMarkup(): string {
  const store = createAppStore('http://node', {
    client: createConsoleClient({ url: 'http://node', token: 't', fetch: noFetch }),
    now: () => 0,
  });
  const serving = { ...store, getInitialState: store.getState };
  return renderToStaticMarkup(createElement(AppStoreContext.Provider, { value: serving }, createElement(SettingsPage)));
}

// Item 12: Settings and the remote-cluster dialog say when tokens are not really encrypted (safeStorage's basic_text).
describe("item 12: how remote clusters' tokens are kept, in Settings and the cluster dialog", () => {
  afterEach(() => {
    delete (globalThis as { window?: unknown }).window;
  });

  it("the bridge's value is parsed: a malformed one, or none (a plain browser), claims nothing", () => {
    expect(bridgeTokenStorage({ tokenStorage: BASIC_TEXT })).toEqual(BASIC_TEXT);
    expect(bridgeTokenStorage({ tokenStorage: { sealed: 'yes', how: 'x' } })).toBeNull();
    expect(bridgeTokenStorage({ tokenStorage: { ...KEYRING, extra: 1 } })).toBeNull();
    expect(bridgeTokenStorage({ tokenStorage: null })).toBeNull();
    expect(bridgeTokenStorage(undefined)).toBeNull();
  });

  it('not sealed: a warning line with the reason; sealed: a quiet line naming the keyring', () => {
    const warn = renderToStaticMarkup(createElement(TokenStorageNotice, { storage: BASIC_TEXT }));
    expect(warn).toContain('data-sealed="false"');
    expect(warn).toContain('notice-error');
    expect(warn).toContain('stored obfuscated, not encrypted: no OS keyring was found (basic_text)');
    const quiet = renderToStaticMarkup(createElement(TokenStorageNotice, { storage: KEYRING }));
    expect(quiet).toContain('data-sealed="true"');
    expect(quiet).not.toContain('notice-error');
    expect(renderToStaticMarkup(createElement(TokenStorageNotice, { storage: null }))).toBe('');
  });

  it("the add-cluster dialog and the Settings screen show the desktop app's statement", () => {
    for (const markup of [withBridge(BASIC_TEXT, dialogMarkup), withBridge(BASIC_TEXT, settingsMarkup)]) {
      expect(markup).toContain('data-testid="token-storage"');
      expect(markup).toContain('no OS keyring was found (basic_text)');
      expect(markup).not.toContain('encrypted with');
    }
    expect(withBridge(KEYRING, dialogMarkup)).toContain('encrypted with the OS keyring (gnome_libsecret)');
    // A plain browser (no preload) says nothing of sealing.
    expect(dialogMarkup()).not.toContain('token-storage');
    expect(settingsMarkup()).not.toContain('token-storage');
  });
});
