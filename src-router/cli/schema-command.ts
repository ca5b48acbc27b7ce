import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { configJsonSchemas } from '../config';
import { configDocsMarkdown } from '../config/config-docs';
import { projectRoot } from '../paths';

/** `routerdesk schema [--out DIR] [--docs FILE]`: the JSON Schemas of the config files and the configuration reference, both from the zod schemas. */
export async function schemaCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { out: { type: 'string' }, docs: { type: 'string' } },
    strict: true,
  });
  const dir = values.out ?? join(projectRoot(), 'resources', 'schema');
  mkdirSync(dir, { recursive: true });
  for (const [name, schema] of Object.entries(configJsonSchemas())) {
    writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
    process.stdout.write(`wrote ${join(dir, name)}\n`);
  }
  const docs = values.docs ?? join(projectRoot(), 'docs', 'config.md');
  mkdirSync(dirname(docs), { recursive: true });
  writeFileSync(docs, configDocsMarkdown());
  process.stdout.write(`wrote ${docs}\n`);
}
