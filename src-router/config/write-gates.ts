import { ConfigError } from './load';
import { MIN_CONSOLE_TOKEN_LENGTH, type NodeConfig } from './node-config';

/**
 * The two routing write gates (ROUTE-8), named as the seed names them. The environment wins over the config:
 * `INFERENCE_DEPLOY_ENABLED` over `console.routing_writes_enabled` (the deployment gate) and
 * `INFERENCE_ADMIN_EMAILS` over `console.operators` (who is an operator). The gate names returned are the ones in
 * force, so the console's tooltip and read-only texts name what an operator would change.
 *
 * The seed's operator list holds e-mail addresses of accounts. A node has no accounts: it knows a caller by the
 * Bearer token it presents. So each entry is `EMAIL=TOKEN`: the address names the operator (logged with the writes
 * it makes), the token is what that operator's console presents. An entry without a token cannot identify anyone and
 * stops start-up with a clear error (a `ConfigError`, printed without a stack), as does a deployment flag that is not a
 * boolean.
 */

export const DEPLOY_ENV = 'INFERENCE_DEPLOY_ENABLED';
export const ADMIN_ENV = 'INFERENCE_ADMIN_EMAILS';
export const DEPLOY_CONFIG_KEY = 'console.routing_writes_enabled';
export const OPERATORS_CONFIG_KEY = 'console.operators';

export interface Operator {
  /** The operator's e-mail address (from `INFERENCE_ADMIN_EMAILS`), or null for a `console.operators` token. */
  email: string | null;
  token: string;
}

export interface WriteGates {
  routingWritesEnabled: boolean;
  operators: Operator[];
  /** The name of each gate in force: the environment variable when set, else the config key. */
  gate: { deployment: string; operators: string };
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** `INFERENCE_DEPLOY_ENABLED`: true/false (also 1/0, yes/no, on/off), case-insensitive. */
export function parseDeployEnabled(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  throw new ConfigError(`${DEPLOY_ENV}: not a boolean: "${raw}" (use true or false)`);
}

/** `INFERENCE_ADMIN_EMAILS`: comma-separated `EMAIL=TOKEN` entries (whitespace around entries ignored). */
export function parseAdminEmails(raw: string): Operator[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  return entries.map((entry, i) => {
    const at = entry.indexOf('=');
    const email = at < 0 ? entry : entry.slice(0, at).trim();
    const token = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!/^[^\s@=]+@[^\s@=]+$/.test(email))
      throw new ConfigError(`${ADMIN_ENV}[${i}]: not an e-mail address: "${email}" (entries are EMAIL=TOKEN)`);
    if (token.length < MIN_CONSOLE_TOKEN_LENGTH)
      throw new ConfigError(
        `${ADMIN_ENV}[${i}] (${email}): needs the operator's console token after "=", at least ${MIN_CONSOLE_TOKEN_LENGTH} characters (entries are EMAIL=TOKEN)`,
      );
    return { email, token };
  });
}

/** The gates in force for this node: the environment (when the variable is set and not empty) wins over the config. */
export function resolveWriteGates(
  console: Pick<NodeConfig['console'], 'operators' | 'routing_writes_enabled'>,
  env: Record<string, string | undefined>,
): WriteGates {
  const deploy = env[DEPLOY_ENV]?.trim() ? env[DEPLOY_ENV]! : undefined;
  const admins = env[ADMIN_ENV]?.trim() ? env[ADMIN_ENV]! : undefined;
  return {
    routingWritesEnabled: deploy === undefined ? console.routing_writes_enabled : parseDeployEnabled(deploy),
    operators:
      admins === undefined ? console.operators.map((token) => ({ email: null, token })) : parseAdminEmails(admins),
    gate: {
      deployment: deploy === undefined ? DEPLOY_CONFIG_KEY : DEPLOY_ENV,
      operators: admins === undefined ? OPERATORS_CONFIG_KEY : ADMIN_ENV,
    },
  };
}
