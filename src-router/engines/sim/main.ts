import { SimCrashedError } from './errors';
import { parseSimEngineArgv, SIM_ENGINE_USAGE, SimOptionsError } from './options';
import { type SimEngineHandle, startSimEngine } from './server';

/** Where `simEngineMain` writes and how it exits; the defaults are the process's own. */
export interface SimEngineIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Never returns in a real process. A test stub may return; simEngineMain then throws SimEngineExit. */
  exit(code: number): void;
  /** Watched with --exit-with-stdin. */
  stdin: NodeJS.ReadableStream;
  /** Install SIGTERM/SIGINT handlers (close, exit 0). Default true. */
  handleSignals: boolean;
}

/** Thrown when an injected `exit` returned instead of ending the process. */
export class SimEngineExit extends Error {
  constructor(readonly exitCode: number) {
    super(`sim-engine exited with code ${exitCode}`);
  }
}

const defaultIo = (): SimEngineIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  exit: (code) => process.exit(code),
  stdin: process.stdin,
  handleSignals: true,
});

/** How long a graceful close may take before the process exits anyway. */
const CLOSE_GRACE_MS = 2_000;

/**
 * `routerdesk sim-engine [flags]`: parse flags (bad flags: message, exit 2), crash if told to
 * (exit 1), listen, print `sim-engine listening on http://host:port (shape, alias)`, then load.
 * SIGTERM/SIGINT (and the end of stdin with --exit-with-stdin) close it and exit 0.
 * Resolves with the running engine; its close() stops it without exiting.
 */
export async function simEngineMain(argv: string[], io: Partial<SimEngineIo> = {}): Promise<SimEngineHandle> {
  const sys: SimEngineIo = { ...defaultIo(), ...io };
  const die = (code: number, message: string): never => {
    if (message) sys.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
    sys.exit(code);
    throw new SimEngineExit(code);
  };

  let options;
  try {
    options = parseSimEngineArgv(argv);
  } catch (err) {
    if (err instanceof SimOptionsError) return die(2, err.message);
    throw err;
  }
  if (options === 'help') {
    sys.stdout.write(`${SIM_ENGINE_USAGE}\n`);
    return die(0, '');
  }

  let engine: SimEngineHandle;
  try {
    engine = await startSimEngine(options, { onCrash: (code) => sys.exit(code) });
  } catch (err) {
    if (err instanceof SimCrashedError) return die(1, err.message);
    return die(1, `sim-engine: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`);
  }
  sys.stdout.write(`sim-engine listening on ${engine.url} (${options.shape}, ${options.alias})\n`);

  const cleanups: (() => void)[] = [];
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => sys.exit(0), CLOSE_GRACE_MS);
    force.unref();
    void stop().finally(() => {
      clearTimeout(force);
      sys.exit(0);
    });
  };
  const stop = async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await engine.close();
  };

  if (sys.handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, shutdown);
      cleanups.push(() => process.off(signal, shutdown));
    }
  }
  if (options.exit_with_stdin) {
    const stdin = sys.stdin;
    stdin.on('end', shutdown);
    stdin.on('close', shutdown);
    stdin.on('error', shutdown);
    stdin.resume();
    cleanups.push(() => {
      stdin.off('end', shutdown);
      stdin.off('close', shutdown);
      stdin.off('error', shutdown);
      stdin.pause();
    });
  }

  return { ...engine, close: stop };
}
