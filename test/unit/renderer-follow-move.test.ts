import { describe, expect, it } from 'vitest';
import { accessHelp } from '../../src-renderer/src/access-help';
import { createConsoleClient } from '../../src-renderer/src/api/console-client';
import { followMove, movedLink } from '../../src-renderer/src/settings/follow-move';
import { createAppStore } from '../../src-renderer/src/store/app-store';

// Issue #40 item 1: the console follows a node a Settings save moved (a new port) to its new address with the save's
// one-time code, once the old address redirects; the pill says whether no token was sent or the token was refused,
// and the page names the ways back in that exist. Scripted fetch, a clock the test drives.

describe('following a moved node', () => {
  const run = (answers: (() => Promise<Response>)[]) => {
    let clock = 0;
    const asked: { url: string; redirect?: string }[] = [];
    const went: string[] = [];
    const done = followMove({
      from: 'http://127.0.0.1:8080',
      to: 'http://127.0.0.1:9090',
      code: 'one-time',
      fetch: (url, init) => {
        asked.push({ url, redirect: init?.redirect });
        const next = answers.shift();
        return next ? next() : Promise.reject(new TypeError('connection refused'));
      },
      navigate: (href) => went.push(href),
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      timeoutMs: 5_000,
      everyMs: 250,
    });
    return { done, asked, went };
  };

  it('waits while the old node answers or nothing does, and goes at the first redirect, with the code', async () => {
    const { done, asked, went } = run([
      async () => new Response('{}', { status: 200 }),
      () => Promise.reject(new TypeError('connection refused')),
      async () => new Response(null, { status: 307, headers: { location: 'http://127.0.0.1:9090/' } }),
    ]);
    expect(await done).toBe(true);
    expect(asked).toEqual(
      Array.from({ length: 3 }, () => ({ url: 'http://127.0.0.1:8080/health', redirect: 'manual' })),
    );
    expect(went).toEqual(['http://127.0.0.1:9090/?code=one-time#settings']);
  });

  it('gives up after its bounded wait without going anywhere', async () => {
    const { done, asked, went } = run([]);
    expect(await done).toBe(false);
    expect(asked.length).toBe(5_000 / 250 + 1);
    expect(went).toEqual([]);
  });

  it('the link escapes the code', () => {
    expect(movedLink('http://h:1/', 'a+b/c')).toBe('http://h:1/?code=a%2Bb%2Fc#settings');
  });
});

describe('what the console says when it cannot get in', () => {
  const storeWith = (token: string, status: number) =>
    createAppStore('http://n', {
      client: createConsoleClient({
        url: 'http://n',
        token,
        fetch: async () => new Response('{"error":{"message":"no"}}', { status }),
      }),
      now: () => 0,
    });

  it('no token sent vs token rejected: the pill tells them apart, and neither keeps the node', async () => {
    const none = storeWith('', 200);
    await none.getState().refresh();
    expect(none.getState().connection).toMatchObject({ status: 'no-token', node: null });
    const wrong = storeWith('a-token-the-node-refuses', 401);
    await wrong.getState().refresh();
    expect(wrong.getState().connection).toMatchObject({ status: 'rejected', node: null });
    expect(wrong.getState().connection.failure?.message).toMatch(/^console token rejected: .*routerdesk console-link/);
  });

  it('names the ways back in that exist, and nothing when connected', () => {
    for (const status of ['no-token', 'rejected'] as const) {
      const help = accessHelp(status)!;
      const text = JSON.stringify(help);
      expect(text).toContain('routerdesk console-link --dir FOLDER');
      expect(text).toContain('routerdesk console-link --config FILE');
      expect(text).toMatch(/press Enter/);
      expect(text).toMatch(/desktop app/);
      expect(text).not.toMatch(/\?token=|\/router\/v1/);
    }
    expect(accessHelp('no-token')!.what).toMatch(/no console token/);
    expect(accessHelp('rejected')!.what).toMatch(/refused/);
    for (const status of ['online', 'connecting', 'offline'] as const) expect(accessHelp(status)).toBeNull();
  });
});
