import { describe, expect, it } from 'vitest';
import { ConfigError, parseAdminEmails, parseDeployEnabled, resolveWriteGates } from '../../src-router/config';
import { checkWriteGate } from '../../src-router/routing';

/** ROUTE-8: INFERENCE_DEPLOY_ENABLED and INFERENCE_ADMIN_EMAILS win over the config keys, which stay. */
const CONSOLE = { operators: ['config-operator-token-1'], routing_writes_enabled: true };
const TOKEN = 'ops-console-token-0123';

describe('write gates (ROUTE-8)', () => {
  it('without the environment: the config keys, named as such', () => {
    expect(resolveWriteGates(CONSOLE, {})).toEqual({
      routingWritesEnabled: true,
      operators: [{ email: null, token: 'config-operator-token-1' }],
      gate: { deployment: 'console.routing_writes_enabled', operators: 'console.operators' },
    });
    // An empty variable is not set.
    expect(
      resolveWriteGates(CONSOLE, { INFERENCE_DEPLOY_ENABLED: ' ', INFERENCE_ADMIN_EMAILS: '' }).gate.deployment,
    ).toBe('console.routing_writes_enabled');
  });

  it('the environment wins and is the gate named', () => {
    const g = resolveWriteGates(CONSOLE, {
      INFERENCE_DEPLOY_ENABLED: 'false',
      INFERENCE_ADMIN_EMAILS: ` ops@example.com=${TOKEN} , b@x.org=${TOKEN}-b`,
    });
    expect(g).toEqual({
      routingWritesEnabled: false,
      operators: [
        { email: 'ops@example.com', token: TOKEN },
        { email: 'b@x.org', token: `${TOKEN}-b` },
      ],
      gate: { deployment: 'INFERENCE_DEPLOY_ENABLED', operators: 'INFERENCE_ADMIN_EMAILS' },
    });
    expect(
      resolveWriteGates({ ...CONSOLE, routing_writes_enabled: false }, { INFERENCE_DEPLOY_ENABLED: 'TRUE' })
        .routingWritesEnabled,
    ).toBe(true);
    expect(checkWriteGate({ writable: false, canWrite: true }, g.gate)).toEqual({
      code: 'routing_read_only',
      gate: 'INFERENCE_DEPLOY_ENABLED',
      message: 'Read-only on this deployment: routing writes are turned off (INFERENCE_DEPLOY_ENABLED is false).',
    });
    expect(checkWriteGate({ writable: true, canWrite: false }, g.gate)?.message).toBe(
      'Read-only for your account: only operators (INFERENCE_ADMIN_EMAILS) can change routing.',
    );
  });

  it('bad values stop start-up with the variable named', () => {
    for (const v of ['1', '0', 'yes', 'No', 'on', 'OFF']) expect(typeof parseDeployEnabled(v)).toBe('boolean');
    expect(() => parseDeployEnabled('maybe')).toThrow(ConfigError);
    expect(() => parseDeployEnabled('maybe')).toThrow(
      new ConfigError('INFERENCE_DEPLOY_ENABLED: not a boolean: "maybe" (use true or false)'),
    );
    expect(() => parseAdminEmails('ops@example.com')).toThrow(
      /INFERENCE_ADMIN_EMAILS\[0\] \(ops@example.com\): needs the operator's console token/,
    );
    expect(() => parseAdminEmails(`ops@example.com=short`)).toThrow(/at least 16 characters/);
    expect(() => parseAdminEmails(`not-an-email=${TOKEN}`)).toThrow(
      'INFERENCE_ADMIN_EMAILS[0]: not an e-mail address: "not-an-email" (entries are EMAIL=TOKEN)',
    );
  });
});
