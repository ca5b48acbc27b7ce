import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends/free-port';

// A port for a process to bind next lies below the ephemeral range, where no outgoing connection can take it as
// its source port in the meantime (the CI failure of session 2: EADDRINUSE on a pre-chosen test port).
describe('freePort', () => {
  const lo = (() => {
    try {
      return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    } catch {
      return 32768;
    }
  })();

  it('hands out distinct, bindable ports below the ephemeral range', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) expect(p).toBeLessThan(lo);
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(ports[0], '127.0.0.1', r));
    srv.close();
  });

  it('skips a port that is in use', async () => {
    const first = await freePort();
    const held = createServer();
    // Either this test holds it, or something else already does: in use either way.
    await new Promise<void>((r) => {
      held.once('error', () => r());
      held.listen(first + 1, '127.0.0.1', r);
    });
    try {
      const next = await freePort();
      expect(next).not.toBe(first + 1);
    } finally {
      held.close();
    }
  });
});
