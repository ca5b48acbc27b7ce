import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { TIMELINE_MAX_LIMIT } from '../../src-router/contract/timeline';
import { count } from '../../src-router/http/decision-routes';
import { buildOpenApiDocument, type JsonSchema } from '../../src-router/http/openapi/document';
import { SCHEMAS, type SchemaName } from '../../src-router/http/openapi/schemas';

// The API document says what the routes accept: a body the contract schema refuses only through a refinement (a
// rule JSON Schema does not see by itself) is refused by the document too, and one it takes is taken.
const doc = buildOpenApiDocument('test');
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(doc as unknown as JsonSchema, 'openapi');

const sha256 = 'a'.repeat(64);
const PROBES: [SchemaName, unknown][] = [
  ['OllamaShowRequest', {}],
  ['OllamaShowRequest', { verbose: true }],
  ['OllamaShowRequest', { name: 'llama' }],
  ['OllamaShowRequest', { model: 'llama' }],
  ['AssetFetchRequest', { sha256 }],
  ['AssetFetchRequest', { sha256, nodeId: 'gpu-a' }],
  ['AssetFetchRequest', { sha256, url: 'http://10.0.0.5:8080/w.gguf' }],
  ['AssetFetchRequest', { sha256, nodeId: 'gpu-a', url: 'http://10.0.0.5:8080/w.gguf' }],
  ['ClusterProfilePatch', {}],
  ['ClusterProfilePatch', { name: 'lab' }],
  ['ClusterProfilePatch', { token: 't' }],
  ['ClusterProfilePatch', { url: 'http://10.0.0.5:8080' }],
  ['ClusterProfilePatch', { url: 'https://gpu.lab.example/' }],
  ['ClusterProfilePatch', { url: 'http://10.0.0.5:8080/v1' }],
  ['ClusterProfilePatch', { url: 'http://10.0.0.5:8080?x=1' }],
  ['ClusterProfilePatch', { url: 'http://me:pw@10.0.0.5:8080' }],
  ['ClusterProfilePatch', { url: 'ftp://10.0.0.5' }],
  ['ClusterProfileCreate', { name: 'lab', url: 'http://[::1]:8080', token: 't' }],
  ['ClusterProfileCreate', { name: 'lab', url: 'http://10.0.0.5:8080/#x', token: 't' }],
];

function documented(name: SchemaName) {
  const id = `${name}Input` in doc.components.schemas ? `${name}Input` : name;
  return ajv.getSchema(`openapi#/components/schemas/${id}`)!;
}

describe('the API document and the contract schemas agree on bodies a refinement decides', () => {
  it.each(PROBES.map(([name, body]) => [name, JSON.stringify(body), body] as const))('%s %s', (name, _shown, body) => {
    const routeTakes = SCHEMAS[name].safeParse(body).success;
    expect(
      documented(name)(body),
      `the document ${routeTakes ? 'refuses' : 'takes'} it, the route ${routeTakes ? 'takes' : 'refuses'} it`,
    ).toBe(routeTakes);
  });
});

describe('the API document and the routes agree on row counts in a query', () => {
  // Each parameter a route reads with `count` (a whole number from 1 to its most), with the most it allows.
  const PARAMS: [string, string, number][] = [
    ['/router/v1/console/decisions', 'limit', 1000],
    ['/router/v1/node/decisions', 'limit', 1000],
    ['/router/v1/console/decisions/export', 'max', 1_000_000],
    ['/router/v1/console/timeline', 'limit', TIMELINE_MAX_LIMIT],
    ['/router/v1/node/timeline', 'limit', TIMELINE_MAX_LIMIT],
  ];
  const takes = (v: string, most: number) => {
    try {
      count(v, 'n', most);
      return true;
    } catch {
      return false;
    }
  };
  it.each(PARAMS)('%s ?%s=', (path, name, most) => {
    const param = (doc.paths[path].get as { parameters: { name: string; schema: JsonSchema }[] }).parameters.find(
      (p) => p.name === name,
    )!;
    const validate = ajv.compile(param.schema);
    for (const v of [
      '0',
      '1',
      '7',
      '10',
      '99',
      String(most - 1),
      String(most),
      String(most + 1),
      String(most * 10),
      '01',
      '-1',
      '1.5',
      'abc',
      '1e3',
    ]) {
      expect(validate(v), `${path}?${name}=${v}: the route ${takes(v, most) ? 'takes' : 'refuses'} it`).toBe(
        takes(v, most),
      );
    }
  });
});
