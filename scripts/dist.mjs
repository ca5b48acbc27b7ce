#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
// `npm run dist`: desktop packages with electron-builder (issue #13). It needs Electron's binary, which `npm ci`
// downloads only where that is allowed (`allowScripts` keeps it off on machines that cannot download it).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const binary = join(root, 'node_modules', 'electron', 'dist');
if (!existsSync(binary)) {
  process.stderr.write(
    "npm run dist: Electron's binary is not installed here (node_modules/electron/dist is missing: its download is not allowed on this machine); on a machine that can download it run `npm ci && npm explore electron -- npm run postinstall && npm run dist`.\n",
  );
  process.exit(1);
}
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run('npm', ['run', 'build']);
run('npx', ['--yes', 'electron-builder@26.17.0', '--config', 'electron-builder.yml', ...process.argv.slice(2)]);
