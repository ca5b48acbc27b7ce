import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkPageOf, type ServedWithBrowser, serveWithBrowser } from '../support/serve-with-browser';

const SESSION = '/router/v1/console/session';

async function exchange(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${SESSION}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { token?: string; error?: { code: string; message: string } },
  };
}

// `routerdesk serve` for real, with a browser command that records its arguments: neither the console token nor a
// one-time code appears on the browser's command line (every local user sees it in `ps`) — it names an owner-only page
// that holds the code — nor the token in what serve prints.
describe('routerdesk serve opens an owner-only code page (no secret on the browser command line)', () => {
  let served: ServedWithBrowser;
  let token = '';

  beforeAll(async () => {
    served = await serveWithBrowser();
  }, 90_000);

  afterAll(async () => {
    await served?.stop();
  });

  it('the browser gets one argument, the file URL of an owner-only page whose code is exchanged for the token once', async () => {
    expect(served.browserArgv).toHaveLength(1);
    const page = linkPageOf(served.browserArgv[0]);
    expect(page.origin).toBe(served.url);
    expect(served.browserArgv[0]).not.toContain(page.code);
    expect(served.browserArgv[0]).not.toMatch(/code|token/);
    const first = await exchange(served.url, { code: page.code });
    expect(first.status).toBe(200);
    token = first.body.token!;
    expect(token).toMatch(/^[\w-]{20,}$/);
    expect(served.browserArgv.join(' ')).not.toContain(token);
    // The token works on the console API.
    const models = await fetch(`${served.url}/router/v1/console/models`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(models.status).toBe(200);
    // Never again.
    const second = await exchange(served.url, { code: page.code });
    expect(second.status).toBe(401);
    expect(second.body.error).toMatchObject({ code: 'console_code_used' });
    expect(second.body.error?.message).toMatch(/routerdesk console-link/);
    expect(second.body.token).toBeUndefined();
  });

  it('what serve prints carries a code of its own, not the token', async () => {
    expect(token).not.toBe('');
    expect(served.output()).not.toContain(token);
    const printed = new URL(served.printed);
    expect([...printed.searchParams.keys()]).toEqual(['code']);
    expect(printed.searchParams.get('code')).not.toBe(linkPageOf(served.browserArgv[0]).code);
    const answer = await exchange(served.url, { code: printed.searchParams.get('code') });
    expect(answer).toEqual({ status: 200, body: { token } });
  });

  it('a wrong code is a 401; a malformed body a 400 naming the field; another site cannot exchange one', async () => {
    expect(await exchange(served.url, { code: 'no-such-code-0123456789' })).toMatchObject({
      status: 401,
      body: { error: { code: 'invalid_console_code' } },
    });
    expect(await exchange(served.url, { code: '' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request' } },
    });
    expect(await exchange(served.url, { code: 5 })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request' } },
    });
    expect(await exchange(served.url, { code: 'x'.repeat(201) })).toMatchObject({ status: 400 });
    expect(await exchange(served.url, { code: 'abc', token: 'x' })).toMatchObject({ status: 400 });
    expect(await exchange(served.url, ['abc'])).toMatchObject({ status: 400 });
    // The one console route open without a token reads no large body.
    expect(await exchange(served.url, { code: 'abc', pad: 'x'.repeat(10_000) })).toMatchObject({ status: 413 });
    // A cross-site page posting a guessed code (CSRF) is refused before the route runs.
    expect(
      (await exchange(served.url, { code: 'no-such-code-0123456789' }, { origin: 'http://evil.example' })).status,
    ).toBe(403);
  });

  it('a holder of the token can ask for a code (POST /router/v1/console/codes); nobody else can', async () => {
    expect(token).not.toBe('');
    const codes = `${served.url}/router/v1/console/codes`;
    expect((await fetch(codes, { method: 'POST' })).status).toBe(401);
    expect(
      (await fetch(codes, { method: 'POST', headers: { authorization: 'Bearer not-the-token-0123456789' } })).status,
    ).toBe(401);
    const minted = (await (
      await fetch(codes, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    ).json()) as { code: string; expiresInMs: number };
    expect(minted.expiresInMs).toBe(60_000);
    expect(await exchange(served.url, { code: minted.code })).toEqual({ status: 200, body: { token } });
    // A longer-lived one (a printed link) on request, at most 10 minutes.
    const ask = (body: unknown) =>
      fetch(codes, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(((await (await ask({ expiresInMs: 600_000 })).json()) as { expiresInMs: number }).expiresInMs).toBe(600_000);
    expect((await ask({ expiresInMs: 600_001 })).status).toBe(400);
    expect((await ask({ expiresInMs: 10 })).status).toBe(400);
  });
});
