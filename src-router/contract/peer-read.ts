import type { z } from 'zod';

/**
 * What a node reads from another node. Contract objects are `.strict()`: what this node sends and what its console
 * and users send it are exactly the contract. Peers of different builds must still interoperate: a newer peer adds
 * optional fields, and an older reader that refused the whole view over one unknown key would drop that peer's
 * queues, lending state or rows. `peerRead(schema)` is the same schema with every strict object, at any depth,
 * stripping unknown keys instead — every known field is still validated as the contract says; loose objects (client
 * request bodies passed on) keep theirs. Every read of a peer's answer or push goes through it (ARCHITECTURE.md).
 */
export function peerRead<T extends z.ZodType>(schema: T): T {
  let read = cache.get(schema);
  if (!read) {
    read = tolerant(schema);
    cache.set(schema, read);
  }
  return read as T;
}

const cache = new WeakMap<z.ZodType, z.ZodType>();

type Def = Record<string, unknown> & { type: string };
const defOf = (s: z.ZodType) => s._zod.def as unknown as Def;
const isStrict = (catchall: unknown) => catchall !== undefined && defOf(catchall as z.ZodType).type === 'never';

/** The schema rebuilt with its strict objects stripping; schemas holding no object come back as they are. */
function tolerant(schema: z.ZodType): z.ZodType {
  const def = defOf(schema);
  const inner = (key: string) => ({ [key]: peerRead(def[key] as z.ZodType) });
  switch (def.type) {
    case 'object': {
      const shape = Object.fromEntries(
        Object.entries(def.shape as Record<string, z.ZodType>).map(([k, v]) => [k, peerRead(v)]),
      );
      const catchall = isStrict(def.catchall)
        ? undefined
        : def.catchall === undefined
          ? undefined
          : peerRead(def.catchall as z.ZodType);
      return clone(schema, { ...def, shape, catchall });
    }
    case 'array':
      return clone(schema, { ...def, ...inner('element') });
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return clone(schema, { ...def, ...inner('innerType') });
    case 'record':
      return clone(schema, { ...def, ...inner('valueType') });
    case 'union':
      return clone(schema, { ...def, options: (def.options as z.ZodType[]).map((o) => peerRead(o)) });
    case 'intersection':
      return clone(schema, { ...def, ...inner('left'), ...inner('right') });
    case 'pipe':
      return clone(schema, { ...def, ...inner('in'), ...inner('out') });
    case 'tuple':
      return clone(schema, {
        ...def,
        items: (def.items as z.ZodType[]).map((o) => peerRead(o)),
        rest: def.rest ? peerRead(def.rest as z.ZodType) : def.rest,
      });
    case 'lazy': {
      const getter = def.getter as () => z.ZodType;
      return clone(schema, { ...def, getter: () => peerRead(getter()) });
    }
    default:
      return schema;
  }
}

function clone(schema: z.ZodType, def: Def): z.ZodType {
  return (schema as unknown as { clone(def: unknown): z.ZodType }).clone(def);
}
