import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src-router/http/app';
import { docsPage } from '../../src-router/http/openapi/docs-page';
import {
  buildOpenApiDocument,
  documentPath,
  openApiDocument,
  operationId,
} from '../../src-router/http/openapi/document';
import { EXAMPLES, missingExamples } from '../../src-router/http/openapi/examples';
import { OPERATIONS, STATIC_FILES_REASON, UNDOCUMENTED } from '../../src-router/http/openapi/operations';
import { type RegisteredRoute, registeredRoutes } from '../../src-router/http/openapi/routes';
import { stubDeps } from '../support/stub-deps';

const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1 with swagger-parser', async () => {
    const doc = buildOpenApiDocument('1.2.3');
    expect(doc.openapi).toBe('3.1.0');
    // validate() dereferences in place: give it a copy.
    const api = (await SwaggerParser.validate(
      structuredClone(doc) as unknown as OpenAPIV3_1.Document,
    )) as OpenAPIV3_1.Document;
    expect(api.info.version).toBe('1.2.3');
    expect(Object.keys(api.paths ?? {}).length).toBeGreaterThan(50);
  });

  it('gives every operation a unique operation ID and path/method pair, an example, and every path parameter a description', () => {
    const ids = OPERATIONS.map(operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const pairs = OPERATIONS.map((op) => `${op.method} ${documentPath(op)}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(missingExamples()).toEqual([]);
    const keys = new Set(OPERATIONS.map(key));
    expect(Object.keys(EXAMPLES).filter((k) => !keys.has(k))).toEqual([]);
    for (const op of OPERATIONS) {
      const inPath = [...documentPath(op).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      expect(Object.keys(op.params ?? {}).sort(), key(op)).toEqual(inPath);
    }
  });
});

describe('the routes fastify registers and the documented operations', () => {
  let routes: readonly RegisteredRoute[];
  let uiDir: string;
  beforeAll(async () => {
    // A UI build with two files: fastify-static registers a route per file, which the document leaves out.
    uiDir = mkdtempSync(join(tmpdir(), 'routerdesk-ui-'));
    mkdirSync(join(uiDir, 'assets'));
    writeFileSync(join(uiDir, 'index.html'), '<!doctype html>');
    writeFileSync(join(uiDir, 'assets', 'app.js'), '');
    // Each role: a route registered for one role only is held against the document too.
    const all = new Map<string, RegisteredRoute>();
    for (const role of ['standalone', 'master', 'slave'] as const) {
      const app = await buildApp(stubDeps({ uiDir, role }), { logLevel: 'silent' });
      for (const r of registeredRoutes(app)) all.set(key(r), r);
      await app.close();
    }
    routes = [...all.values()];
  });
  afterAll(() => rmSync(uiDir, { recursive: true, force: true }));

  it('documents every registered route, or leaves it out with a reason', () => {
    const documented = new Set(OPERATIONS.map(key));
    const excluded = new Set(UNDOCUMENTED.map(key));
    const missing = routes.filter((r) => {
      if (documented.has(key(r)) || excluded.has(key(r)) || r.undocumented) return false;
      // fastify's automatic HEAD of a GET answers as that GET does, without a body.
      return !(r.method === 'HEAD' && documented.has(key({ method: 'GET', path: r.path })));
    });
    expect(missing.map(key)).toEqual([]);
    expect(
      routes.filter((r) => r.undocumented).every((r) => r.undocumented === STATIC_FILES_REASON && r.method !== 'POST'),
    ).toBe(true);
    expect(routes.some((r) => r.undocumented && r.path === '/assets/app.js')).toBe(true);
  });

  it('documents no operation that no route serves', () => {
    const registered = new Set(routes.map(key));
    expect(OPERATIONS.filter((op) => !registered.has(key(op))).map(key)).toEqual([]);
    expect(UNDOCUMENTED.filter((u) => !registered.has(key(u))).map(key)).toEqual([]);
  });
});

describe('the /docs page', () => {
  const doc = buildOpenApiDocument('1.0.0');
  const html = docsPage(doc);

  it('shows every operation and every schema, and every schema link leads to one', () => {
    for (const op of OPERATIONS) expect(html, key(op)).toContain(`id="${operationId(op)}"`);
    const ids = new Set([...html.matchAll(/id="([^"]+)"/g)].map((m) => m[1]));
    for (const name of Object.keys(doc.components.schemas))
      expect(ids.has(`schema-${name.toLowerCase()}`), name).toBe(true);
    const links = [...html.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(100);
    expect(links.filter((l) => !ids.has(l))).toEqual([]);
  });

  it("escapes what the document says and needs no script or style (the node's CSP allows neither inline)", () => {
    expect(html).not.toMatch(/<script|<style|style=|<path>/i);
    expect(html).toContain('/router/v1/console/&lt;path&gt;');
  });
});

describe('/openapi.json', () => {
  it('serializes the document once per process, not per request (a public, unauthenticated route)', async () => {
    const deps = stubDeps({ role: 'standalone' });
    const app = await buildApp(deps, { logLevel: 'silent' });
    const doc = openApiDocument(deps.version);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const bodies: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ method: 'GET', url: '/openapi.json', headers: { host: '127.0.0.1' } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        bodies.push(res.body);
      }
      expect(JSON.parse(bodies[2])).toEqual(doc);
      expect(new Set(bodies).size).toBe(1);
      expect(stringify.mock.calls.filter(([value]) => value === doc).length).toBeLessThanOrEqual(1);
    } finally {
      stringify.mockRestore();
      await app.close();
    }
  });
});
