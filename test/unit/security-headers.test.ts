import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src-router/http/security-headers';

// Issue #13: the page carries the node's policy as a meta tag too (frame-ancestors only works as a header).
describe('the console content security policy', () => {
  it("index.html has the node's policy, without the header-only directive", () => {
    const html = readFileSync(new URL('../../src-renderer/index.html', import.meta.url), 'utf8');
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
    const headerOnly = (p: string) =>
      p
        .split('; ')
        .filter((d) => !d.startsWith('frame-ancestors'))
        .join('; ');
    expect(meta).toBe(headerOnly(CONSOLE_CSP));
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)|\*/);
  });
});
