/** `routerdesk make-whisper-model OUT.bin …`: a tiny whisper.cpp model with seeded random weights. */
import { parseArgs } from 'node:util';
import { describeTinyWhisper, writeTinyWhisperModel } from './writer';

export const MAKE_WHISPER_MODEL_USAGE = `usage: routerdesk make-whisper-model OUT.bin [--seed N] [--state N] [--heads N] [--layers N] [--type f16|f32]
  defaults: --seed 1 --state 64 --heads 2 --layers 1 --type f16 (about 8 MB; loads in whisper-server, which reads every window as " hello")
`;

function int(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new RangeError(`--${name} must be a whole number, got '${raw}'`);
  return Number(raw);
}

export async function makeWhisperModelMain(argv: string[]): Promise<void> {
  try {
    const s = { type: 'string' } as const;
    const { values, positionals } = parseArgs({
      args: argv,
      options: { seed: s, state: s, heads: s, layers: s, type: s, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) return void process.stdout.write(MAKE_WHISPER_MODEL_USAGE);
    if (positionals.length !== 1) throw new RangeError('give one output file');
    if (values.type !== undefined && values.type !== 'f16' && values.type !== 'f32')
      throw new RangeError(`--type must be f16 or f32, got '${values.type}'`);
    const seed = int('seed', values.seed);
    if (seed !== undefined && seed > 0xffffffff) throw new RangeError('--seed must fit in 32 bits');
    const result = await writeTinyWhisperModel(positionals[0]!, {
      seed,
      state: int('state', values.state),
      heads: int('heads', values.heads),
      layers: int('layers', values.layers),
      type: values.type as 'f16' | 'f32' | undefined,
    });
    process.stdout.write(`${describeTinyWhisper(result)}\n`);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOSPC') {
      process.stderr.write(
        `routerdesk make-whisper-model: cannot write ${argv.find((a) => !a.startsWith('-')) ?? 'the model'}: ${(err as Error).message}\n`,
      );
      process.exitCode = 1;
      return;
    }
    if (!(err instanceof RangeError) && code?.startsWith('ERR_PARSE_ARGS') !== true) throw err;
    process.stderr.write(`routerdesk make-whisper-model: ${(err as Error).message}\n\n${MAKE_WHISPER_MODEL_USAGE}`);
    process.exitCode = 2;
  }
}
