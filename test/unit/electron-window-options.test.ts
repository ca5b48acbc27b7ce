import { describe, expect, it } from 'vitest';
import { mainWindowOptions } from '../../src-main/window-options';

// Issue #9: the console token never appears in a command line (a renderer's arguments are visible in `ps`).
describe('the desktop window', () => {
  it("is isolated and sandboxed, and passes nothing on the renderer's command line", () => {
    const o = mainWindowOptions({ preload: '/x/preload.cjs' });
    expect(o.webPreferences).toMatchObject({
      preload: '/x/preload.cjs',
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
    });
    expect(o.webPreferences?.additionalArguments ?? []).toEqual([]);
  });
});
