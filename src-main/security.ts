/**
 * Electron's security checklist for everything the main process does not show on purpose: every
 * permission request is denied, and any web contents — the window's or another that appears — opens no new windows
 * (links go to the system browser), navigates nowhere and attaches no webviews. Electron-like interfaces keep it
 * unit-testable without the Electron binary.
 */

export interface SessionLike {
  setPermissionRequestHandler(
    handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void,
  ): void;
  setPermissionCheckHandler(handler: () => boolean): void;
}

export interface WebContentsLike {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  on(event: 'will-navigate' | 'will-attach-webview', listener: (event: { preventDefault(): void }) => void): void;
}

export interface AppLike {
  on(event: 'web-contents-created', listener: (event: unknown, contents: WebContentsLike) => void): void;
}

/** No camera, microphone, notifications, geolocation, …: the console needs none. */
export function denyAllPermissions(session: SessionLike): void {
  session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

/** Guards one web contents: http(s) links open externally, everything else is refused. */
export function guardWebContents(contents: WebContentsLike, openExternal: (url: string) => void): void {
  contents.setWindowOpenHandler(({ url }) => {
    if (/^https?:/.test(url)) openExternal(url);
    return { action: 'deny' };
  });
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** Every web contents ever created gets the guards (a window the app did not expect included). */
export function guardAllWebContents(app: AppLike, openExternal: (url: string) => void): void {
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents, openExternal));
}
