import { parseArgs } from 'node:util';
import { loadNodeConfig } from '../config';
import { createNode, type RouterNode } from '../node';

/** Stops the node on SIGINT/SIGTERM (engines included) and exits. */
export function stopOnSignals(node: RouterNode): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.app.log.info(`${signal}: stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    node.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

export async function nodeCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } }, strict: true });
  if (!values.config) throw new Error('routerdesk node needs --config FILE');
  const config = loadNodeConfig(values.config);
  const node = await createNode(config, { configFile: values.config });
  stopOnSignals(node);
  process.stdout.write(`routerdesk node '${config.cluster.node_id}' (${config.cluster.role}) listening on ${node.url}\n`);
}
