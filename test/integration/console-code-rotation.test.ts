import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthAnswerSchema } from '../../src-router/contract';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// Issue #26 item 7: a one-time console code stands for the token it was issued under. An operator who changes a
// leaked console token in Settings ends the old token's reach: a code its holder issued before the change is not
// exchanged for the new token after the restart.

const NEW_TOKEN = 'rotated-console-token-0123456789';

describe('issue #26 item 7: console codes do not survive a change of the console token', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({ models: {} });
  });
  afterAll(async () => {
    await node?.stop();
  });

  const startedAt = async () => healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;
  const withToken = (token: string, path: string, method = 'GET', body?: unknown) =>
    fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const exchange = (code: string) =>
    fetch(`${node.url}/router/v1/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });

  it('a code issued with the old token is refused after the token changed; a code issued with the new one works', async () => {
    const { code } = (await (await withToken(TEST_CONSOLE_TOKEN, '/router/v1/console/codes', 'POST')).json()) as {
      code: string;
    };
    const { config } = (await (await withToken(TEST_CONSOLE_TOKEN, '/router/v1/console/settings')).json()) as {
      config: { console: Record<string, unknown> };
    };
    const started = await startedAt();
    const put = await withToken(TEST_CONSOLE_TOKEN, '/router/v1/console/settings', 'PUT', {
      config: { ...config, console: { ...config.console, token: NEW_TOKEN } },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    await eventually(async () => (await startedAt().catch(() => started)) !== started, {
      what: 'the node restarted on the new token',
      timeoutMs: 20_000,
    });
    expect((await withToken(TEST_CONSOLE_TOKEN, '/router/v1/console/models')).status).toBe(401);

    const stolen = await exchange(code);
    expect(stolen.status).toBe(401);
    expect(await stolen.text()).not.toContain(NEW_TOKEN);

    const fresh = ((await (await withToken(NEW_TOKEN, '/router/v1/console/codes', 'POST')).json()) as { code: string })
      .code;
    const ok = await exchange(fresh);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ token: NEW_TOKEN });
  });
});

// The same when an operator's token is withdrawn: with no operators left the console token is an operator's, so a code
// the withdrawn operator issued before must not be exchanged for it after the restart.
const READ_ONLY = 'read-only-console-token-0123456789';
const WITHDRAWN = 'withdrawn-operator-token-0123456789';
const KEPT = 'kept-operator-token-0123456789';

describe('issue #26 item 7: console codes do not survive a change of the operators', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({ models: {}, config: { console: { token: READ_ONLY, operators: [WITHDRAWN, KEPT] } } });
  });
  afterAll(async () => {
    await node?.stop();
  });

  const startedAt = async () => healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;
  const withToken = (token: string, path: string, method = 'GET', body?: unknown) =>
    fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const exchange = (code: string) =>
    fetch(`${node.url}/router/v1/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });

  it('a code a withdrawn operator issued is refused after the restart', async () => {
    const { code } = (await (await withToken(WITHDRAWN, '/router/v1/console/codes', 'POST')).json()) as {
      code: string;
    };
    const { config } = (await (await withToken(KEPT, '/router/v1/console/settings')).json()) as {
      config: { console: { operators: string[] } };
    };
    const started = await startedAt();
    // The operators list is masked item by item; the kept one is sent back as its mask.
    const kept = config.console.operators.filter((_, i) => i === 1);
    const put = await withToken(KEPT, '/router/v1/console/settings', 'PUT', {
      config: { ...config, console: { ...config.console, operators: kept } },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    await eventually(async () => (await startedAt().catch(() => started)) !== started, {
      what: 'the node restarted without the operator',
      timeoutMs: 20_000,
    });
    expect((await withToken(WITHDRAWN, '/router/v1/console/models')).status).toBe(401);
    expect((await withToken(KEPT, '/router/v1/console/settings')).status).toBe(200);

    const stolen = await exchange(code);
    expect(stolen.status).toBe(401);
    expect(await stolen.text()).not.toContain(READ_ONLY);
  });
});
