import { existsSync } from 'node:fs';
import { join } from 'node:path';

// Integration tests run the built CLI as real child processes. `npm test` builds first; a bare `vitest` run
// without a build fails here with the fix, instead of failing deep inside a test.
export default function setup() {
  const cli = join(new URL('../..', import.meta.url).pathname, 'out', 'main', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (npm test does)`);
}
