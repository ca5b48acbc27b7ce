import { describe, expect, it } from 'vitest';
import { hostAllowed, hostOnly, originAllowed } from '../../src-router/http/client-guard';

// Issue #9: DNS rebinding (Host) and cross-site browser requests (Origin).
const o = {
  allowedHosts: ['router.lan'],
  corsOrigins: ['https://app.example'],
  publicUrl: 'http://gpu-7.lan:8080',
  apiKeys: [],
};

describe('client guards', () => {
  it('Host: IP literals, localhost, this machine, the public_url host and listed hosts; not a rebinding name', () => {
    for (const h of [
      '127.0.0.1:8080',
      '[::1]:8080',
      '10.0.0.5',
      'localhost:8080',
      'ui.localhost',
      'workstation:8080',
      'gpu-7.lan:8080',
      'ROUTER.lan',
    ])
      expect(hostAllowed(h, o, 'workstation'), h).toBe(true);
    for (const h of ['evil.example', 'evil.example:8080', 'gpu-7.lan.evil.example', '127.0.0.1.evil.example'])
      expect(hostAllowed(h, o, 'workstation'), h).toBe(false);
    expect(hostAllowed(undefined, o, 'w')).toBe(true);
    expect(hostOnly('[::1]:8080')).toBe('::1');
  });

  it("Origin: the node's own, a listed one, any with *; never another site", () => {
    expect(originAllowed('http://127.0.0.1:8080', '127.0.0.1:8080', o)).toBe('own');
    expect(originAllowed('https://app.example', '127.0.0.1:8080', o)).toBe('listed');
    expect(originAllowed('http://evil.example', '127.0.0.1:8080', o)).toBe(false);
    expect(originAllowed('http://127.0.0.1:9999', '127.0.0.1:8080', o)).toBe(false);
    expect(originAllowed('not a url', '127.0.0.1:8080', o)).toBe(false);
    expect(originAllowed('http://evil.example', 'x', { ...o, corsOrigins: ['*'] })).toBe('listed');
  });
});
