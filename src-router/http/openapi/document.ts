import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { LENT_TO_HEADER, NODE_HEADER, QUEUE_MS_HEADER } from '../../contract/answer-facts';
import { SERVED_BY_HEADER } from '../../serve/guardian-route';
import { CLIENT_API_PATH } from '../answer-headers';
import { type Answer, type Media, OPERATIONS, type Operation, type Security } from './operations';
import { QUERIES, SCHEMAS, type SchemaName } from './schemas';

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
}

export const MEDIA_TYPES: Record<Media, string> = {
  json: 'application/json',
  sse: 'text/event-stream',
  ndjson: 'application/x-ndjson',
  text: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  binary: 'application/octet-stream',
  prometheus: 'text/plain; version=0.0.4',
};

/** Where an `sse` or `ndjson` media type names the schema of each event or line (OpenAPI 3.1 has no field for it). */
export const ITEM_SCHEMA_KEY = 'x-item-schema';

const TAGS: Record<Operation['tag'], string> = {
  Operations: 'Liveness, metrics and this document: no token (the Host and Origin checks apply).',
  OpenAI: 'The OpenAI-compatible client API (`/v1/*`). A client API key is needed only when `server.api_keys` is set.',
  Ollama:
    'The Ollama-compatible client API (`/api/*`), translated onto the same router. Errors are Ollama-shaped (`{"error": "…"}`).',
  Console:
    "The console API the desktop app and the browser UI call (`/router/v1/console/*`), behind the console token; writes need an operator's.",
  Site: "The site API (`/router/v1/site/*`): links, guardians and recipes, kept on the master (a slave refuses writes with 409). Reads: the console token; writes: an operator's.",
  Node: 'The node API between the nodes of a cluster (`/router/v1/node/*`), behind the cluster token. Some operations only a master or only a slave takes (403 `wrong_role`).',
  'Node worker': 'The client operations a master forwards to the node that runs them, behind the cluster token.',
};

const SECURITY_SCHEMES: Record<Exclude<Security, 'none'>, JsonSchema> = {
  clientKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'A client API key from `server.api_keys`. When none is set, the client APIs need no key.',
  },
  console: {
    type: 'http',
    scheme: 'bearer',
    description: 'The console token (`console.token`), or an operator token.',
  },
  operator: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An operator token (`console.operators` or `INFERENCE_ADMIN_EMAILS`); the console token when none is configured.',
  },
  cluster: {
    type: 'http',
    scheme: 'bearer',
    description: 'The cluster token (`cluster.token`) every node of the cluster shares.',
  },
};

const SECURITY_NAMES: Record<Exclude<Security, 'none'>, string> = {
  clientKey: 'clientApiKey',
  console: 'consoleToken',
  operator: 'operatorToken',
  cluster: 'clusterToken',
};

/** The document's path: `:name` → `{name}`, a trailing `*` → `{<wildcard>}`. */
export function documentPath(op: Pick<Operation, 'path' | 'wildcard'>): string {
  return op.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, `{${op.wildcard ?? 'path'}}`);
}

/** A stable operation ID from method and path (`GET /v1/models/*` → `getV1ModelsAny`). */
export function operationId(op: Pick<Operation, 'method' | 'path'>): string {
  const words = op.path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1));
  return `${op.method.toLowerCase()}${words.join('')}${op.path.endsWith('*') ? 'Any' : ''}`;
}

/** What every answer of the client APIs says about where it ran (errors too). */
const CLIENT_ANSWER_HEADERS: Record<string, JsonSchema> = {
  [NODE_HEADER]: {
    required: true,
    description: 'The node that ran the request (a forwarded one: the node the master forwarded it to).',
    schema: { type: 'string' },
  },
  [QUEUE_MS_HEADER]: {
    description:
      'Milliseconds it waited in router queues and for the lane before an engine took it (a lent one: at its owner plus at its helper). A stream whose head went out while it waited sends it as a trailer.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  [LENT_TO_HEADER]: {
    description: 'A lent request: the helper that answered it, `node/model` (its local ID there).',
    schema: { type: 'string' },
  },
  [SERVED_BY_HEADER]: {
    description: "An image request a guardian answered for a text-only model: the guardian's public ID.",
    schema: { type: 'string' },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** JSON Schemas of the named contract schemas, as requests (`input`) or answers (`output`) see them. */
function componentSchemas(names: Iterable<SchemaName>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const name of names) registry.add(SCHEMAS[name], { id: name });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _s, $id: _i, ...rest } = schema as JsonSchema;
      return [id, rest];
    }),
  );
}

function isAnswerName(op: Operation, name: SchemaName): boolean {
  return Object.values(op.answers).some((a) => a.content?.some((c) => c.schema === name));
}

/** Builds the OpenAPI 3.1 document of every operation in `OPERATIONS`. */
export function buildOpenApiDocument(version: string, operations: readonly Operation[] = OPERATIONS): OpenApiDocument {
  const requestNames = new Set<SchemaName>(operations.flatMap((op) => (op.body ? [op.body.schema] : [])));
  const answerNames = new Set<SchemaName>([
    'Error',
    'OllamaError',
    ...operations.flatMap((op) =>
      Object.values(op.answers).flatMap((a) => a.content?.flatMap((c) => (c.schema ? [c.schema] : [])) ?? []),
    ),
  ]);
  const inputs = componentSchemas(requestNames, 'input');
  const outputs = componentSchemas(answerNames, 'output');
  // A schema both sent and answered keeps one name when both views agree; else the request's view is `<name>Input`.
  const requestRef = new Map<SchemaName, string>();
  const schemas: Record<string, JsonSchema> = { ...outputs };
  for (const name of requestNames) {
    const same = answerNames.has(name) && isDeepStrictEqual(inputs[name], outputs[name]);
    const id = answerNames.has(name) && !same ? `${name}Input` : name;
    requestRef.set(name, id);
    if (!same) schemas[id] = inputs[name];
  }

  const paths: OpenApiDocument['paths'] = {};
  for (const op of operations) {
    const path = documentPath(op);
    const errorSchema = op.path.startsWith('/api/') ? 'OllamaError' : 'Error';
    const parameters = [
      ...Object.entries(op.params ?? {}).map(([name, description]) => ({
        name,
        in: 'path',
        required: true,
        description,
        schema: { type: 'string' },
      })),
      ...queryParameters(op),
    ];
    const answers: Record<string, JsonSchema> = {};
    for (const [status, answer] of Object.entries(op.answers)) answers[status] = answerObject(answer);
    if (op.security !== 'none')
      answers['401'] ??= {
        description: 'Missing or wrong token (429 with Retry-After after too many wrong ones)',
        content: { 'application/json': { schema: ref(errorSchema) } },
      };
    answers.default = { description: 'An error', content: { 'application/json': { schema: ref(errorSchema) } } };
    if (CLIENT_API_PATH.test(op.path))
      for (const answer of Object.values(answers)) answer.headers = CLIENT_ANSWER_HEADERS;
    const operation: JsonSchema = {
      operationId: operationId(op),
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      security:
        op.security === 'none'
          ? []
          : op.security === 'clientKey'
            ? [{ clientApiKey: [] }, {}]
            : [{ [SECURITY_NAMES[op.security]]: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(op.body ? { requestBody: requestBody(op.body, requestRef.get(op.body.schema)!) } : {}),
      responses: answers,
    };
    (paths[path] ??= {})[op.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Routerdesk node',
      version,
      description:
        'The HTTP APIs of a Routerdesk router node: OpenAI- and Ollama-compatible client APIs, the console and site APIs, and the node API between the nodes of a cluster. Generated from the contract schemas the routes validate with.',
    },
    servers: [{ url: '/' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: Object.fromEntries(
        Object.entries(SECURITY_SCHEMES).map(([k, v]) => [SECURITY_NAMES[k as Exclude<Security, 'none'>], v]),
      ),
    },
  };

  function queryParameters(op: Operation): JsonSchema[] {
    if (!op.query) return [];
    const schema = z.toJSONSchema(QUERIES[op.query], {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'any',
    }) as { properties?: Record<string, JsonSchema>; required?: string[] };
    return Object.entries(schema.properties ?? {}).map(([name, s]) => {
      const { description, ...rest } = s;
      return {
        name,
        in: 'query',
        required: schema.required?.includes(name) ?? false,
        ...(description ? { description } : {}),
        schema: rest,
      };
    });
  }

  function answerObject(answer: Answer): JsonSchema {
    if (!answer.content?.length) return { description: answer.description };
    const content: Record<string, JsonSchema> = {};
    for (const c of answer.content) {
      const streamed = c.media === 'sse' || c.media === 'ndjson';
      if (c.media === 'json') content[MEDIA_TYPES.json] = { schema: c.schema ? ref(c.schema) : {} };
      else if (streamed)
        content[MEDIA_TYPES[c.media]] = {
          schema: { type: 'string' },
          ...(c.schema ? { [ITEM_SCHEMA_KEY]: ref(c.schema) } : {}),
        };
      else
        content[MEDIA_TYPES[c.media]] = {
          schema:
            c.media === 'binary'
              ? { type: 'string', contentMediaType: 'application/octet-stream' }
              : { type: 'string' },
        };
    }
    return { description: answer.description, content };
  }
}

function requestBody(body: NonNullable<Operation['body']>, id: string): JsonSchema {
  if (body.media === 'multipart') {
    return {
      required: true,
      content: {
        'multipart/form-data': { schema: ref(id), encoding: { file: { contentType: 'application/octet-stream' } } },
      },
    };
  }
  return { required: body.required ?? true, content: { 'application/json': { schema: ref(id) } } };
}

let built: { version: string; doc: OpenApiDocument } | undefined;

/** The document of this build, generated once per process. */
export function openApiDocument(version: string): OpenApiDocument {
  if (built?.version !== version) built = { version, doc: buildOpenApiDocument(version) };
  return built.doc;
}
