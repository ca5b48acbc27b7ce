import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineEnv, passesToEngine, withoutNodeVariables } from '../../src-router/backends/engine-env';
import { readNvidiaGpu } from '../../src-router/runtime/gpu';

const NODE_ENV = {
  PATH: '/usr/bin',
  HOME: '/home/op',
  LANG: 'C.UTF-8',
  LC_NUMERIC: 'C',
  TZ: 'UTC',
  TMPDIR: '/tmp/x',
  LD_LIBRARY_PATH: '/opt/cuda/lib64',
  CUDA_VISIBLE_DEVICES: '0',
  HIP_VISIBLE_DEVICES: '1',
  ROCR_VISIBLE_DEVICES: '1',
  GGML_CUDA_NO_PINNED: '1',
  LLAMA_ARG_THREADS: '4',
  OMP_NUM_THREADS: '2',
  OPENBLAS_CORETYPE: 'Haswell',
  HF_HOME: '/srv/hf',
  ROUTERDESK_LLAMA_RUNTIME: '/opt/llama-runtime',
  INFERENCE_ADMIN_EMAILS: 'ops@example.com=secret-operator-token',
  INFERENCE_DEPLOY_ENABLED: 'true',
  ROUTERDESK_LOG_LEVEL: 'warn',
  ROUTERDESK_CLOCK_OFFSET_MS: '10',
  ROUTERDESK_CONSOLE_TOKEN: 'secret-console',
  AWS_SECRET_ACCESS_KEY: 'aws',
  GITHUB_TOKEN: 'gh',
  HF_TOKEN: 'hf',
  SSH_AUTH_SOCK: '/run/agent',
  NODE_OPTIONS: '--inspect',
};

describe('issue #26 item 9: engine environment allow-list', () => {
  it("keeps the allow-listed variables and drops the node's own, credentials and everything else", () => {
    const env = engineEnv(NODE_ENV, {}, 'linux');
    expect(Object.keys(env).sort()).toEqual([
      'CUDA_VISIBLE_DEVICES',
      'GGML_CUDA_NO_PINNED',
      'HF_HOME',
      'HIP_VISIBLE_DEVICES',
      'HOME',
      'LANG',
      'LC_NUMERIC',
      'LD_LIBRARY_PATH',
      'LLAMA_ARG_THREADS',
      'OMP_NUM_THREADS',
      'OPENBLAS_CORETYPE',
      'PATH',
      'ROCR_VISIBLE_DEVICES',
      'ROUTERDESK_LLAMA_RUNTIME',
      'TMPDIR',
      'TZ',
    ]);
    expect(env.OPENBLAS_CORETYPE).toBe('Haswell');
  });

  it("sets what the launch spec names (the model's env) over the node's, its own variables included", () => {
    const env = engineEnv(
      NODE_ENV,
      { OMP_NUM_THREADS: '8', HF_TOKEN: 'model-hf', ROUTERDESK_SIM_MARK: 'x', ELECTRON_RUN_AS_NODE: '1' },
      'linux',
    );
    expect(env).toMatchObject({
      OMP_NUM_THREADS: '8',
      HF_TOKEN: 'model-hf',
      ROUTERDESK_SIM_MARK: 'x',
      ELECTRON_RUN_AS_NODE: '1',
    });
    expect(env).not.toHaveProperty('INFERENCE_ADMIN_EMAILS');
  });

  it('never lets a node variable through a prefix, in any case; names are case-insensitive on Windows only', () => {
    expect(passesToEngine('INFERENCE_ADMIN_EMAILS', 'linux')).toBe(false);
    expect(passesToEngine('inference_admin_emails', 'win32')).toBe(false);
    expect(passesToEngine('Routerdesk_Console_Token', 'win32')).toBe(false);
    expect(passesToEngine('Path', 'win32')).toBe(true);
    expect(passesToEngine('SystemRoot', 'win32')).toBe(true);
    expect(passesToEngine('Path', 'linux')).toBe(false);
    expect(passesToEngine('PATHOLOGICAL', 'linux')).toBe(false);
  });

  it("a desktop helper gets the user's session without the node's variables", () => {
    const env = withoutNodeVariables({ ...NODE_ENV, DISPLAY: ':0', DBUS_SESSION_BUS_ADDRESS: 'unix:x' });
    expect(env).toMatchObject({ DISPLAY: ':0', DBUS_SESSION_BUS_ADDRESS: 'unix:x', PATH: '/usr/bin' });
    expect(Object.keys(env).filter((n) => /^(ROUTERDESK|INFERENCE)_/.test(n))).toEqual([]);
  });

  it.runIf(process.platform !== 'win32')("nvidia-smi runs with the engine environment, not the node's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'routerdesk-env-'));
    const out = join(dir, 'env.txt');
    const script = join(dir, 'fake-smi');
    writeFileSync(script, `#!/bin/sh\nenv > '${out}'\nexit 1\n`);
    chmodSync(script, 0o755);
    process.env.INFERENCE_ADMIN_EMAILS = 'ops@example.com=secret-operator-token';
    try {
      expect(await readNvidiaGpu({ binary: script })).toBeUndefined();
      const seen = readFileSync(out, 'utf8');
      expect(seen).not.toContain('secret-operator-token');
      expect(seen).toContain('PATH=');
    } finally {
      delete process.env.INFERENCE_ADMIN_EMAILS;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
