import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadNodeConfig } from '../config';
import { consoleAccessDir, consoleLink, readAccessRecord, writeLinkPage } from '../console-access';
import { CONSOLE_CODE_MAX_TTL_MS, consoleCodeSchema } from '../contract';
import { DEFAULT_SERVE_DIR } from '../paths';
import { openBrowser } from './open-browser';

export const CONSOLE_LINK_USAGE = `usage: routerdesk console-link [--dir DIR | --config FILE] [--open]

Prints a fresh one-time link to the console of the node running on that config (serve's folder: DIR/node.yaml;
default ${DEFAULT_SERVE_DIR}), good once within 10 minutes, and writes it into an owner-only page; --open starts the
browser on that page. Works from any shell of the node's user: nothing secret reaches a command line.
`;

/**
 * `routerdesk console-link`: the way back into a running node's console from any shell, without its terminal. It
 * reads the node's owner-only access record (`<store_dir>/console/access.json`, written by the node at each start),
 * asks the node for a one-time code with the console token kept there, and prints the link.
 */
export async function consoleLinkCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      dir: { type: 'string' },
      config: { type: 'string', short: 'c' },
      open: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(CONSOLE_LINK_USAGE);
  if (values.dir && values.config) throw new LinkError('give --dir or --config, not both');
  const configFile = resolve(values.config ?? join(values.dir ?? DEFAULT_SERVE_DIR, 'node.yaml'));
  const config = loadNodeConfig(configFile);
  const dir = consoleAccessDir(config.cluster.store_dir);
  let record: ReturnType<typeof readAccessRecord>;
  try {
    record = readAccessRecord(dir);
  } catch (err) {
    throw new LinkError(
      `cannot read the node's access record in ${dir} (${(err as Error).message}): run console-link as the node's own user`,
    );
  }
  const start = values.config
    ? `routerdesk node --config ${configFile}`
    : `routerdesk serve --dir ${values.dir ?? DEFAULT_SERVE_DIR}`;
  if (!record) throw new LinkError(`no node is running on ${configFile} (nothing in ${dir}): start it with ${start}`);
  if (!pidAlive(record.pid))
    throw new LinkError(`the node that ran on ${configFile} (PID ${record.pid}) is gone: start it with ${start}`);
  let res: Response;
  try {
    res = await fetch(`${record.url}/router/v1/console/codes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${record.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ expiresInMs: CONSOLE_CODE_MAX_TTL_MS }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new LinkError(`the node at ${record.url} (PID ${record.pid}) did not answer: ${(err as Error).message}`);
  }
  if (!res.ok)
    throw new LinkError(`the node at ${record.url} refused a one-time code (HTTP ${res.status}): ${await res.text()}`);
  const { code, expiresInMs } = consoleCodeSchema.parse(await res.json());
  const page = writeLinkPage(dir, record.url, code);
  process.stdout.write(
    `${consoleLink(record.url, code)}\n` +
      `  opens the console of the node at ${record.url} once, within ${Math.round(expiresInMs / 60_000)} minutes\n` +
      `  or open the page ${page}\n`,
  );
  if (values.open) openBrowser(page);
}

/** A refusal of console-link: one line for the operator, no stack. */
export class LinkError extends Error {
  readonly code = 'console_link';
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
