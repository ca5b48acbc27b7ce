import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { configJsonSchemas } from '../config';
import { projectRoot } from '../paths';

export async function schemaCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { out: { type: 'string' } }, strict: true });
  const dir = values.out ?? join(projectRoot(), 'resources', 'schema');
  mkdirSync(dir, { recursive: true });
  for (const [name, schema] of Object.entries(configJsonSchemas())) {
    writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
    process.stdout.write(`wrote ${join(dir, name)}\n`);
  }
}
