import { z } from 'zod';
import { modelConfigSchema } from './model-config';
import { nodeConfigSchema } from './node-config';

/** JSON Schemas of the YAML files an operator writes, generated from the zod schemas (shipped in resources/schema/). */
export function configJsonSchemas(): Record<string, unknown> {
  const opts = { io: 'input', unrepresentable: 'any' } as const;
  return {
    'node-config.schema.json': {
      $id: 'routerdesk/node-config',
      title: 'Routerdesk node config',
      ...z.toJSONSchema(nodeConfigSchema, opts),
    },
    'model-config.schema.json': {
      $id: 'routerdesk/model-config',
      title: 'Routerdesk model config',
      ...z.toJSONSchema(modelConfigSchema, opts),
    },
  };
}
