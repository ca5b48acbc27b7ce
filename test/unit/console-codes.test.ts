import { describe, expect, it } from 'vitest';
import { ConsoleCodes } from '../../src-router/http/console-codes';

// Item 7 (serve's browser link): one-time codes for the console token, never the token on a command line.
describe('console one-time codes (item 7: no console token on the browser command line)', () => {
  it('a code works once: the second exchange is told it was used, a wrong code is unknown', () => {
    const codes = new ConsoleCodes();
    const code = codes.issue();
    expect(code).toMatch(/^[\w-]{20,}$/);
    expect(codes.issue()).not.toBe(code);
    expect(codes.redeem('not-a-code')).toBe('unknown');
    expect(codes.redeem('')).toBe('unknown');
    expect(codes.redeem(code)).toBe('ok');
    expect(codes.redeem(code)).toBe('used');
    expect(codes.redeem(code.slice(0, -1))).toBe('unknown');
  });

  it('a code expires: usable up to its life, unknown from then on (spent ones are forgotten then too)', () => {
    let now = 1_000_000;
    const codes = new ConsoleCodes({ ttlMs: 60_000, now: () => now });
    const late = codes.issue();
    const spent = codes.issue();
    const long = codes.issue(600_000);
    expect(codes.redeem(spent)).toBe('ok');
    now += 59_999;
    expect(codes.size).toBe(3);
    now += 1;
    expect(codes.redeem(late)).toBe('unknown');
    expect(codes.redeem(spent)).toBe('unknown');
    expect(codes.size).toBe(1);
    now += 500_000;
    expect(codes.redeem(long)).toBe('ok');
  });

  it('a bounded number are kept: issuing past the bound forgets the oldest', () => {
    const codes = new ConsoleCodes({ max: 3 });
    const all = Array.from({ length: 5 }, () => codes.issue());
    expect(codes.size).toBe(3);
    expect(codes.redeem(all[0])).toBe('unknown');
    expect(codes.redeem(all[1])).toBe('unknown');
    for (const c of all.slice(2)) expect(codes.redeem(c)).toBe('ok');
  });

  it('clearing (a new console token) forgets every code but the one a Settings save gave to follow the node', () => {
    const codes = new ConsoleCodes();
    const plain = codes.issue();
    const follow = codes.issue(600_000, { keep: true });
    codes.clear();
    expect(codes.redeem(plain)).toBe('unknown');
    expect(codes.redeem(follow)).toBe('ok');
    expect(codes.redeem(follow)).toBe('used');
  });
});
