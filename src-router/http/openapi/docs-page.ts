import type { JsonSchema, OpenApiDocument } from './document';

/**
 * The API document as one plain HTML page (`GET /docs`): operations grouped by tag, each with its security,
 * parameters, request body and answers, then every schema. No script and no style (the node's CSP allows neither
 * inline): the browser's own rendering of headings, tables and `<details>`.
 */
export function docsPage(doc: OpenApiDocument): string {
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op: op as unknown as OperationView })),
  );
  const out: string[] = [];
  out.push(
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
  );
  out.push(`<title>${esc(doc.info.title)} API ${esc(doc.info.version)}</title></head><body>`);
  out.push(`<h1>${esc(doc.info.title)} API <small>${esc(doc.info.version)}</small></h1>`);
  out.push(
    `<p>${prose(doc.info.description)} The machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(doc.openapi)}).</p>`,
  );
  out.push('<h2>Tokens</h2><p>Every token goes as <code>Authorization: Bearer &lt;token&gt;</code>.</p><ul>');
  for (const [name, scheme] of Object.entries(doc.components.securitySchemes))
    out.push(`<li><b>${esc(name)}</b>: ${prose(String(scheme.description ?? ''))}</li>`);
  out.push('</ul><h2>Contents</h2><ul>');
  for (const tag of doc.tags)
    out.push(
      `<li><a href="#tag-${slug(tag.name)}">${esc(tag.name)}</a> (${ops.filter((o) => o.op.tags[0] === tag.name).length})</li>`,
    );
  out.push('<li><a href="#schemas">Schemas</a></li></ul>');

  for (const tag of doc.tags) {
    out.push(`<h2 id="tag-${slug(tag.name)}">${esc(tag.name)}</h2><p>${prose(tag.description)}</p>`);
    for (const { path, method, op } of ops.filter((o) => o.op.tags[0] === tag.name))
      out.push(operationHtml(path, method, op));
  }

  out.push('<h2 id="schemas">Schemas</h2>');
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    out.push(
      `<details id="schema-${slug(name)}"><summary><code>${esc(name)}</code></summary><pre>${schemaHtml(schema)}</pre></details>`,
    );
  }
  out.push('</body></html>');
  return out.join('\n');
}

interface OperationView {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: JsonSchema }[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string; content?: Record<string, JsonSchema> }>;
}

function operationHtml(path: string, method: string, op: OperationView): string {
  const out: string[] = [];
  out.push(
    `<h3 id="${esc(op.operationId)}"><code>${esc(method.toUpperCase())} ${esc(path)}</code> — ${esc(op.summary)}</h3>`,
  );
  if (op.description) out.push(`<p>${prose(op.description)}</p>`);
  const who =
    op.security.length === 0
      ? 'no token'
      : op.security.map((s) => Object.keys(s)[0] ?? 'none (when no key is configured)').join(' or ');
  out.push(`<p>Token: ${esc(who)}</p>`);
  if (op.parameters?.length) {
    out.push(
      '<table><thead><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th><th>Meaning</th></tr></thead><tbody>',
    );
    for (const p of op.parameters) {
      out.push(
        `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${schemaHtml(p.schema, false)}</code></td><td>${prose(p.description ?? '')}</td></tr>`,
      );
    }
    out.push('</tbody></table>');
  }
  if (op.requestBody) {
    for (const [type, media] of Object.entries(op.requestBody.content))
      out.push(
        `<p>Request body (${esc(type)}${op.requestBody.required ? '' : ', optional'}): ${schemaHtml(media.schema, false)}</p>`,
      );
  }
  out.push('<ul>');
  for (const [status, answer] of Object.entries(op.responses)) {
    const types = Object.entries(answer.content ?? {}).map(([type, media]) => {
      const schema = media.schema as JsonSchema | undefined;
      const item = media['x-item-schema'] as JsonSchema | undefined;
      return `${esc(type)}${item ? `, each event ${schemaHtml(item, false)}` : schema && schema.$ref ? ` ${schemaHtml(schema, false)}` : ''}`;
    });
    out.push(
      `<li><b>${esc(status)}</b> ${prose(answer.description)}${types.length ? `: ${types.join('; ')}` : ''}</li>`,
    );
  }
  out.push('</ul>');
  return out.join('\n');
}

/** A schema as indented JSON, each `$ref` a link to its schema; a bare reference is just the link. */
function schemaHtml(schema: JsonSchema, pretty = true): string {
  const only =
    Object.keys(schema).length === 1 && typeof schema.$ref === 'string'
      ? /^#\/components\/schemas\/([A-Za-z0-9_]+)$/.exec(schema.$ref)
      : null;
  if (only) return `<a href="#schema-${slug(only[1])}">${esc(only[1])}</a>`;
  const text = esc(JSON.stringify(schema, null, pretty ? 2 : 0));
  return text.replace(
    /&quot;\$ref&quot;:\s?&quot;#\/components\/schemas\/([A-Za-z0-9_]+)&quot;/g,
    (_m, name: string) => `&quot;$ref&quot;: <a href="#schema-${slug(name)}">${esc(name)}</a>`,
  );
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase();

/** Prose of the document: escaped, `code` spans as <code>. */
function prose(s: string): string {
  return esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}
