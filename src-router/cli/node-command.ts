import { parseArgs } from 'node:util';
import { NodeHost } from '../node-host';

/** Stops the node on SIGINT/SIGTERM (engines included) and exits. */
export function stopOnSignals(node: {
  close(): Promise<void>;
  current: { app: { log: { info(m: string): void } } };
}): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.current.app.log.info(`${signal}: stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    node.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

export async function nodeCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } }, strict: true });
  if (!values.config) throw new Error('routerdesk node needs --config FILE');
  // The Settings screen can rewrite the config and restart the node in-process.
  const host = await NodeHost.start({
    configFile: values.config,
    log: (m) => process.stderr.write(`routerdesk: ${m}\n`),
    onRestart: (node) =>
      process.stdout.write(
        `routerdesk node '${node.config.cluster.node_id}' (${node.config.cluster.role}) restarted, listening on ${node.url}\n`,
      ),
  });
  const { config, url } = host.current;
  stopOnSignals(host);
  process.stdout.write(`routerdesk node '${config.cluster.node_id}' (${config.cluster.role}) listening on ${url}\n`);
}
