import { describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src-renderer/src/connection';
import {
  DASH,
  formatCapabilities,
  formatClock,
  formatContextSize,
  formatIdleUnload,
  formatSpan,
  formatUptime,
  orDash,
  shortHash,
  statePillClass,
} from '../../src-renderer/src/format';

describe('orDash', () => {
  it('shows absent values as —', () => {
    expect(DASH).toBe('—');
    expect(orDash(null)).toBe('—');
    expect(orDash(undefined)).toBe('—');
    expect(orDash('')).toBe('—');
    expect(orDash('   ')).toBe('—');
    expect(orDash(Number.NaN)).toBe('—');
  });
  it('keeps reported values, zero included', () => {
    expect(orDash('boom')).toBe('boom');
    expect(orDash(0)).toBe('0');
    expect(orDash(42)).toBe('42');
  });
});

describe('shortHash', () => {
  const hex = 'a3f9c2e81b7d4f6a0c5e9b2d8f1a7c3e';
  it('keeps the first 12 characters', () => {
    expect(shortHash(hex)).toBe('a3f9c2e81b7d');
    expect(shortHash(hex, 8)).toBe('a3f9c2e8');
  });
  it('drops an algorithm prefix before cutting', () => {
    expect(shortHash(`sha256:${hex}`)).toBe('a3f9c2e81b7d');
  });
  it('leaves short hashes whole', () => {
    expect(shortHash('abc')).toBe('abc');
  });
  it('shows — when there is no hash', () => {
    expect(shortHash(null)).toBe('—');
    expect(shortHash(undefined)).toBe('—');
    expect(shortHash('')).toBe('—');
  });
});

describe('formatContextSize', () => {
  it('groups thousands', () => {
    expect(formatContextSize(8192)).toBe('8,192');
    expect(formatContextSize(131072)).toBe('131,072');
    expect(formatContextSize(512)).toBe('512');
  });
  it('shows — when no window is stated, never 0', () => {
    expect(formatContextSize(null)).toBe('—');
    expect(formatContextSize(undefined)).toBe('—');
    expect(formatContextSize(Number.NaN)).toBe('—');
  });
});

describe('formatIdleUnload', () => {
  it('says when a model unloads: never, after each request, after its idle time, or at the armed time', () => {
    expect(formatIdleUnload(null, null)).toBe('never');
    expect(formatIdleUnload(0, null)).toBe('after each request');
    expect(formatIdleUnload(300_000, null)).toBe('after 5m idle');
    expect(formatIdleUnload(90_000, null)).toBe('after 1m 30s idle');
    const at = new Date(2025, 0, 2, 14, 3, 7).getTime();
    expect(formatIdleUnload(300_000, new Date(at).toISOString())).toBe('at 14:03:07');
    expect(formatIdleUnload(300_000, 'garbage')).toBe('after 5m idle');
  });
  it('writes spans the way configs do', () => {
    expect(formatSpan(800)).toBe('800ms');
    expect(formatSpan(45_000)).toBe('45s');
    expect(formatSpan(7_200_000)).toBe('2h');
    expect(formatSpan(4_500_000)).toBe('1h 15m');
  });
});

describe('formatCapabilities', () => {
  it('joins, or —', () => {
    expect(formatCapabilities(['text', 'multimodal'])).toBe('text, multimodal');
    expect(formatCapabilities([])).toBe('—');
  });
});

describe('statePillClass', () => {
  it.each([
    ['ready', 'pill pill-ok'],
    ['starting', 'pill pill-busy'],
    ['stopping', 'pill pill-busy'],
    ['failed', 'pill pill-bad'],
    ['stopped', 'pill pill-idle'],
    ['something-new', 'pill pill-idle'],
  ])('%s → %s', (state, cls) => {
    expect(statePillClass(state)).toBe(cls);
  });
});

describe('formatUptime', () => {
  const start = '2025-01-01T00:00:00.000Z';
  const at = (ms: number) => Date.parse(start) + ms;
  it('scales its unit', () => {
    expect(formatUptime(start, at(0))).toBe('0s');
    expect(formatUptime(start, at(45_000))).toBe('45s');
    expect(formatUptime(start, at(12 * 60_000 + 5_000))).toBe('12m');
    expect(formatUptime(start, at(3 * 3_600_000 + 5 * 60_000))).toBe('3h 5m');
    expect(formatUptime(start, at(2 * 86_400_000 + 4 * 3_600_000))).toBe('2d 4h');
  });
  it('shows — for a missing, bad or future timestamp', () => {
    expect(formatUptime(null, at(0))).toBe('—');
    expect(formatUptime('yesterday-ish', at(0))).toBe('—');
    expect(formatUptime(start, at(-1_000))).toBe('—');
  });
});

describe('formatClock', () => {
  it('pads local clock time, — before any fetch', () => {
    expect(formatClock(new Date(2025, 0, 1, 9, 5, 7).getTime())).toBe('09:05:07');
    expect(formatClock(null)).toBe('—');
  });
});

describe('resolveConnection', () => {
  it('prefers the preload bridge (Electron)', () => {
    expect(
      resolveConnection({ bridge: { url: 'http://127.0.0.1:9000/', token: 't0k' }, href: 'file:///app/index.html' }),
    ).toEqual({
      url: 'http://127.0.0.1:9000',
      token: 't0k',
      source: 'preload',
      cleanHref: null,
    });
  });
  it('headless: same origin, token from the query, removed from the address', () => {
    const r = resolveConnection({ href: 'http://127.0.0.1:8080/?token=abc123&tab=models#x' });
    expect(r).toEqual({ url: 'http://127.0.0.1:8080', token: 'abc123', source: 'query', cleanHref: '/?tab=models#x' });
  });
  it('falls back to the token kept for this tab, then to none', () => {
    expect(resolveConnection({ href: 'http://h:1/', storedToken: 'kept' })).toMatchObject({
      token: 'kept',
      source: 'session',
      cleanHref: null,
    });
    expect(resolveConnection({ href: 'http://h:1/', storedToken: null })).toMatchObject({
      url: 'http://h:1',
      token: '',
      source: 'none',
    });
  });
  it('an empty bridge (preload without arguments) is ignored', () => {
    expect(resolveConnection({ bridge: { url: '', token: '' }, href: 'http://h:1/?token=q' })).toMatchObject({
      token: 'q',
      source: 'query',
    });
  });
});

describe('resolveConnection with a one-time code (item 7: no console token on the browser command line)', () => {
  it('takes the code out of the address at once, keeping the rest; the tab’s kept token stands until the exchange', () => {
    expect(
      resolveConnection({ href: 'http://127.0.0.1:8080/?code=c0de&cluster=lab#models', storedToken: 'kept' }),
    ).toEqual({
      url: 'http://127.0.0.1:8080',
      token: 'kept',
      source: 'code',
      code: 'c0de',
      cleanHref: '/?cluster=lab#models',
    });
    expect(resolveConnection({ href: 'http://h:1/?code=c0de' })).toMatchObject({
      token: '',
      source: 'code',
      code: 'c0de',
      cleanHref: '/',
    });
  });
  it('a token in the address wins, and neither stays there', () => {
    expect(resolveConnection({ href: 'http://h:1/?code=c0de&token=t0k' })).toEqual({
      url: 'http://h:1',
      token: 't0k',
      source: 'query',
      cleanHref: '/',
    });
  });
});
