import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { requireToken } from '../../src-router/http/auth';
import { AuthThrottle, throttleKeys } from '../../src-router/http/auth-throttle';
import { installErrorHandling } from '../../src-router/http/errors';

// Different wrong tokens per client address: after 10 within a minute, every wrong token from that address is a 429
// with Retry-After until the minute is over; the right token always passes, others are not affected, and a right token
// resets nothing.

const TOKEN = 'the-right-token-0123456789';

async function app(throttle: AuthThrottle) {
  const a = Fastify();
  installErrorHandling(a);
  a.addHook('onRequest', requireToken([TOKEN], 'console', throttle));
  a.get('/x', async () => ({ ok: true }));
  await a.ready();
  return a;
}

const call = (a: Awaited<ReturnType<typeof app>>, token: string | null, remoteAddress: string) =>
  a.inject({
    method: 'GET',
    url: '/x',
    remoteAddress,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });

describe('repeated wrong tokens from one address are slowed; the right token is never refused', () => {
  it('the 11th wrong token within the window is a 429 with Retry-After until the window passes; the right token always passes', async () => {
    let now = 1_000_000;
    const a = await app(new AuthThrottle({ maxFailures: 10, windowMs: 60_000, maxClients: 100, now: () => now }));
    for (let i = 0; i < 10; i++)
      expect((await call(a, `guess-${i}-0123456789abcdef`, '203.0.113.7')).statusCode).toBe(401);
    now += 15_000;
    const refused = await call(a, 'guess-10-0123456789abcdef', '203.0.113.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('45');
    expect(refused.json()).toMatchObject({ error: { code: 'too_many_failed_tokens', type: 'rate_limit_error' } });
    // The right token passes at once (a slave behind the same address is never locked out), and resets nothing.
    expect((await call(a, TOKEN, '203.0.113.7')).statusCode).toBe(200);
    expect((await call(a, 'guess-11-0123456789abcdef', '203.0.113.7')).statusCode).toBe(429);
    expect((await call(a, null, '203.0.113.7')).statusCode).toBe(429);
    // Another address is not affected, an IPv4-mapped spelling is the same address.
    expect((await call(a, 'guess-0-0123456789abcdef', '203.0.113.8')).statusCode).toBe(401);
    expect((await call(a, 'guess-12-0123456789abcdef', '::ffff:203.0.113.7')).statusCode).toBe(429);
    expect((await call(a, TOKEN, '::ffff:203.0.113.7')).statusCode).toBe(200);
    now += 45_000;
    expect((await call(a, 'guess-13-0123456789abcdef', '203.0.113.7')).statusCode).toBe(401);
  });

  it('a right token resets nothing, a request without a token or a wrong one sent again is no new guess, loopback is counted', async () => {
    const a = await app(new AuthThrottle({ maxFailures: 3, windowMs: 60_000, maxClients: 100, now: () => 0 }));
    for (let i = 0; i < 5; i++) expect((await call(a, null, '127.0.0.1')).statusCode).toBe(401);
    // A console tab still polling with the token of an earlier start: 401 each time, never a block.
    for (let i = 0; i < 20; i++) expect((await call(a, 'wrong-1-0123456789abcdef', '127.0.0.1')).statusCode).toBe(401);
    expect((await call(a, 'wrong-1-0123456789abcdef', '127.0.0.1')).statusCode).toBe(401);
    expect((await call(a, TOKEN, '127.0.0.1')).statusCode).toBe(200);
    expect((await call(a, 'wrong-2-0123456789abcdef', '127.0.0.1')).statusCode).toBe(401);
    expect((await call(a, TOKEN, '127.0.0.1')).statusCode).toBe(200);
    expect((await call(a, 'wrong-3-0123456789abcdef', '127.0.0.1')).statusCode).toBe(401);
    expect((await call(a, 'wrong-4-0123456789abcdef', '127.0.0.1')).statusCode).toBe(429);
    expect((await call(a, TOKEN, '127.0.0.1')).statusCode).toBe(200);
  });

  it('an IPv6 address has its own budget and counts against its /64, which has ten times as many', async () => {
    const a = await app(new AuthThrottle({ maxFailures: 3, windowMs: 60_000, maxClients: 100, now: () => 0 }));
    const guess = (n: number, ip: string) => call(a, `guess-${n}-0123456789abcdef`, ip);
    for (let i = 0; i < 3; i++) expect((await guess(i, '2001:db8:1:2::a')).statusCode).toBe(401);
    expect((await guess(3, '2001:db8:1:2::a')).statusCode).toBe(429);
    // A neighbour on the same /64 is not refused for the first address's guesses.
    expect((await guess(4, '2001:db8:1:2::b')).statusCode).toBe(401);
    // A host rotating through its /64 is refused once the network's 30 are spent (4 counted so far: a 429 is no guess).
    let counted = 4;
    let n = 5;
    for (let host = 0x10; counted < 30; host++)
      for (let i = 0; i < 3 && counted < 30; i++, counted++)
        expect((await guess(n++, `2001:db8:1:2::${host.toString(16)}`)).statusCode).toBe(401);
    expect((await guess(n++, '2001:db8:1:2::ffff')).statusCode).toBe(429);
    expect((await guess(n++, '2001:db8:1:3::1')).statusCode).toBe(401);
    expect((await call(a, TOKEN, '2001:db8:1:2::a')).statusCode).toBe(200);
  });

  it('the table is bounded (the address that failed longest ago goes first); IPv6 keys are the address and its /64', () => {
    const t = new AuthThrottle({ maxFailures: 1, windowMs: 60_000, maxClients: 3, now: () => 0 });
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) t.fail(ip, 'wrong-token-0123456789');
    expect(t.size).toBe(3);
    expect(t.retryAfter('10.0.0.1')).toBe(0);
    expect(t.retryAfter('10.0.0.4')).toBe(60);
    expect(throttleKeys('2001:db8:1:2:aaaa::1')[1]).toBe(throttleKeys('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee')[1]);
    expect(throttleKeys('2001:db8:1:2::1')).toEqual(['2001:db8:1:2:0:0:0:1', '2001:db8:1:2::/64']);
    expect(throttleKeys('2001:db8:1:2::1')[1]).not.toBe(throttleKeys('2001:db8:1:3::1')[1]);
    expect(throttleKeys('::ffff:192.0.2.1')).toEqual(['192.0.2.1']);
    expect(throttleKeys('::1')).toEqual(['0:0:0:0:0:0:0:1', '0:0:0:0::/64']);
  });
});
