import { describe, expect, it } from 'vitest';
import { ConfigError, parseNodeConfig } from '../../src-router/config';
import { endpointForClients, staticEndpoint, staticRouteTable } from '../../src-router/routing';

// Issue #37 item 10: user information in a static route's endpoint goes upstream as Basic authorization and is
// shown as user:***@ everywhere.

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

describe('static-route endpoints with credentials', () => {
  it('splits an endpoint into the URL called, its Basic authorization and what is shown', () => {
    expect(staticEndpoint('http://alice:s%40cret%3Ax@10.0.0.1:8000/v1-base')).toEqual({
      shown: 'http://alice:***@10.0.0.1:8000/v1-base',
      url: 'http://10.0.0.1:8000/v1-base',
      authorization: basic('alice:s@cret:x'),
    });
    expect(staticEndpoint('https://bob@models.example')).toEqual({
      shown: 'https://bob:***@models.example',
      url: 'https://models.example',
      authorization: basic('bob:'),
    });
  });

  it('keeps an endpoint without user information exactly as configured', () => {
    for (const e of ['http://127.0.0.1:9000', 'http://h:1/', 'http://h/p?q=a@b'])
      expect(staticEndpoint(e)).toEqual({ shown: e, url: e, authorization: null });
  });

  it('a client error names the endpoint without any user information', () => {
    expect(endpointForClients('http://alice:***@10.0.0.1:8000')).toBe('http://10.0.0.1:8000');
  });

  it('the table shows endpoints with hidden passwords and calls each with its own credentials', () => {
    const t = staticRouteTable({
      a: { engine: 'vllm', endpoints: ['http://u1:p1@h:1', 'http://h:2'] },
      b: { endpoints: ['http://u2:p2@h:1'] },
    });
    expect(t.shown).toEqual({
      a: { engine: 'vllm', endpoints: ['http://u1:***@h:1', 'http://h:2'] },
      b: { endpoints: ['http://u2:***@h:1'] },
    });
    expect(t.call('http://u1:***@h:1')).toEqual({
      shown: 'http://u1:***@h:1',
      url: 'http://h:1',
      authorization: basic('u1:p1'),
    });
    expect(t.call('http://u2:***@h:1').authorization).toBe(basic('u2:p2'));
    expect(t.call('http://h:2').authorization).toBeNull();
  });

  it('the config refuses two endpoints that differ only in their password (they would show the same)', () => {
    expect(() =>
      parseNodeConfig({
        routing: { static_routes: { a: { endpoints: ['http://u:p1@h:1'] }, b: { endpoints: ['http://u:p2@h:1'] } } },
      }),
    ).toThrow(ConfigError);
    const err = (() => {
      try {
        parseNodeConfig({ routing: { static_routes: { a: { endpoints: ['http://u:p1@h:1', 'http://u:p2@h:1'] } } } });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err.issues[0].path).toBe('routing.static_routes.a.endpoints.1');
    // The same endpoint twice, or two users of one host, are fine.
    expect(() =>
      parseNodeConfig({
        routing: {
          static_routes: {
            a: { endpoints: ['http://u:p@h:1', 'http://v:p@h:1'] },
            b: { endpoints: ['http://u:p@h:1'] },
          },
        },
      }),
    ).not.toThrow();
  });
});
