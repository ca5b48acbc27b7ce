import { parseBareProxyArgs, startBareProxy } from '../bench/bare-proxy';
import { stopOnSignals } from './node-command';

/** `routerdesk bare-proxy --upstream URL [--host H] [--port N]`: prints `bare-proxy listening on URL`; bad flags exit 2. */
export async function bareProxyCommand(argv: string[]): Promise<void> {
  let args: ReturnType<typeof parseBareProxyArgs>;
  try {
    args = parseBareProxyArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const proxy = await startBareProxy(args);
  stopOnSignals(proxy);
  process.stdout.write(`bare-proxy listening on ${proxy.url} (to ${args.upstream.origin})\n`);
}
