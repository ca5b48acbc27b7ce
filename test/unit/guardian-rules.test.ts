import { describe, expect, it } from 'vitest';
import { type GuardianPut, guardianPutSchema, type NodeModelRecord } from '../../src-router/contract';
import {
  effectiveGuardians,
  effectiveRule,
  type GuardianRule,
  guardianCandidates,
  validateGuardianSetting,
} from '../../src-router/guardian';
import { type ClusterEntry, mergeIdentities } from '../../src-router/registry';
import { carriesImage, needsGuardian, noGuardian, refusedImage } from '../../src-router/serve/guardian-route';

// GUARD-1 (settings, most specific wins) and GUARD-2 (detection reads structure; refusals), pure.
function rec(localId: string, capabilities: string[]): NodeModelRecord {
  return {
    publicId: localId,
    localId,
    backend: 'sim',
    capabilities,
    lane: capabilities.includes('image') ? 'image' : 'text',
    configHash: `cfg-${localId}`,
    modelHash: null,
    contextsize: 4096,
    parallel: 1,
    engine: null,
    available: true,
  };
}

const NODES: Record<string, NodeModelRecord[]> = {
  a: [
    rec('llama', ['text']),
    rec('llava', ['text', 'multimodal']),
    rec('sdxl', ['image']),
    rec('embed', ['embedding']),
  ],
  b: [rec('qwen', ['text']), rec('gemma-vl', ['text', 'multimodal'])],
  c: [rec('phi', ['text'])],
};
const catalog: ClusterEntry[] = mergeIdentities(
  Object.entries(NODES).map(([nodeId, records]) => ({
    nodeId,
    local: nodeId === 'a',
    healthy: true,
    url: null,
    records,
  })),
  [],
).entries;

const ref = (s: string) => ({ nodeId: s.split('/')[0], model: s.split('/')[1] });
const cluster = (g: string): GuardianRule => ({ scope: 'cluster', nodeId: null, model: null, guardian: ref(g) });
const node = (n: string, g: string): GuardianRule => ({ scope: 'node', nodeId: n, model: null, guardian: ref(g) });
const model = (m: string, g: string): GuardianRule => ({
  scope: 'model',
  nodeId: ref(m).nodeId,
  model: ref(m).model,
  guardian: ref(g),
});

describe('guardian resolution (GUARD-1)', () => {
  it('the most specific setting wins: model, then node, then cluster', () => {
    const rules = [cluster('a/llava'), node('b', 'b/gemma-vl'), model('c/phi', 'b/gemma-vl')];
    expect(effectiveRule(rules, ref('a/llama'))?.scope).toBe('cluster');
    expect(effectiveRule(rules, ref('b/qwen'))).toMatchObject({ scope: 'node', guardian: ref('b/gemma-vl') });
    expect(effectiveRule(rules, ref('c/phi'))).toMatchObject({ scope: 'model', guardian: ref('b/gemma-vl') });
    // The order the settings are stored in does not matter.
    expect(effectiveRule([...rules].reverse(), ref('c/phi'))?.scope).toBe('model');
    expect(effectiveRule([node('b', 'b/gemma-vl')], ref('a/llama'))).toBeNull();
  });

  it('a model never guards itself: the next setting applies', () => {
    expect(effectiveRule([cluster('a/llava'), node('a', 'a/llava')], ref('a/llava'))).toBeNull();
    expect(effectiveRule([cluster('b/gemma-vl'), node('a', 'a/llava')], ref('a/llava'))?.scope).toBe('cluster');
  });

  it('the view lists every text-only model with its guardian, where it came from, and whether it is there', () => {
    const view = effectiveGuardians([cluster('a/llava'), model('b/qwen', 'z/gone')], catalog);
    expect(
      view.map((e) => [`${e.target.ref.nodeId}/${e.target.ref.model}`, e.rule?.scope ?? null, e.available]),
    ).toEqual([
      ['a/llama', 'cluster', true],
      ['b/qwen', 'model', false],
      ['c/phi', 'cluster', true],
    ]);
    expect(
      guardianCandidates(catalog)
        .map((m) => `${m.ref.nodeId}/${m.ref.model}`)
        .sort(),
    ).toEqual(['a/llava', 'b/gemma-vl']);
  });
});

describe('guardian settings validation (GUARD-1)', () => {
  const check = (put: GuardianPut) => validateGuardianSetting(guardianPutSchema.parse(put), catalog);
  const g = (s: string) => ({ node_id: ref(s).nodeId, model: ref(s).model });

  it('accepts each scope naming a multimodal guardian', () => {
    expect(check({ scope: 'cluster', guardian: g('a/llava') })).toMatchObject({ ok: true, value: cluster('a/llava') });
    expect(check({ scope: 'node', node_id: 'c', guardian: g('b/gemma-vl') })).toMatchObject({
      ok: true,
      value: node('c', 'b/gemma-vl'),
    });
    expect(check({ scope: 'model', node_id: 'b', model: 'qwen', guardian: g('a/llava') })).toMatchObject({
      ok: true,
      value: model('b/qwen', 'a/llava'),
    });
  });

  it('refuses what cannot be a guardian or a target, naming the field and saying why', () => {
    const cases: [GuardianPut, string, string, RegExp][] = [
      [{ scope: 'cluster', guardian: g('a/nope') }, 'guardian_not_found', 'guardian', /no model 'nope' on node 'a'/],
      [
        { scope: 'cluster', guardian: g('a/llama') },
        'guardian_not_multimodal',
        'guardian',
        /cannot read images.*multimodal/,
      ],
      [{ scope: 'cluster', guardian: g('a/sdxl') }, 'guardian_not_multimodal', 'guardian', /capabilities: image/],
      [{ scope: 'node', node_id: 'zz', guardian: g('a/llava') }, 'node_not_found', 'node_id', /no node 'zz'/],
      [
        { scope: 'model', node_id: 'b', model: 'nope', guardian: g('a/llava') },
        'model_not_found',
        'model',
        /no model 'nope' on node 'b'/,
      ],
      [
        { scope: 'model', node_id: 'a', model: 'sdxl', guardian: g('a/llava') },
        'not_text_only',
        'model',
        /not a text-only model/,
      ],
      [
        { scope: 'model', node_id: 'b', model: 'gemma-vl', guardian: g('a/llava') },
        'not_text_only',
        'model',
        /not a text-only model/,
      ],
    ];
    for (const [put, code, field, message] of cases) {
      const r = check(put);
      expect(r.ok, JSON.stringify(put)).toBe(false);
      if (r.ok) continue;
      expect(r.error).toMatchObject({ status: 400, code, field });
      expect(r.error.message).toMatch(message);
    }
  });

  it('the body schema refuses unknown keys and a guardian on a delete-shaped body', () => {
    expect(guardianPutSchema.safeParse({ scope: 'cluster' }).success).toBe(false);
    expect(guardianPutSchema.safeParse({ scope: 'cluster', node_id: 'a', guardian: g('a/llava') }).success).toBe(false);
    expect(guardianPutSchema.safeParse({ scope: 'model', node_id: 'a', guardian: g('a/llava') }).success).toBe(false);
  });
});

describe('image detection and refusals (GUARD-2)', () => {
  it('reads structure: image parts of any kind, Ollama images lists; never text', () => {
    const withPart = (type: string) => ({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type }] }],
    });
    for (const t of ['image_url', 'input_image', 'image']) expect(carriesImage('chat', withPart(t)), t).toBe(true);
    expect(
      carriesImage('chat', { messages: [{ role: 'user', content: 'image_url: data:image/png;base64,AAAA' }] }),
    ).toBe(false);
    expect(carriesImage('chat', withPart('text'))).toBe(false);
    expect(carriesImage('chat', { messages: [{ role: 'user', content: 'x', images: ['AAAA'] }] })).toBe(true);
    expect(carriesImage('completion', { prompt: 'x', images: ['AAAA'] })).toBe(true);
    expect(carriesImage('chat', { messages: [{ role: 'user', content: 'x', images: [] }] })).toBe(false);
    expect(carriesImage('embedding', withPart('image_url'))).toBe(false);
  });

  it('a text-only target needs a guardian; a multimodal or static one does not', () => {
    const t = {
      kind: 'local' as const,
      clusterId: 'llama',
      nodeId: 'a',
      localId: 'llama',
      backend: 'sim',
      names: ['llama'],
    };
    expect(needsGuardian({ ...t, capabilities: ['text'] })).toBe(true);
    expect(needsGuardian({ ...t, capabilities: ['text', 'multimodal'] })).toBe(false);
    expect(needsGuardian({ ...t, kind: 'static' })).toBe(false);
    expect(needsGuardian(t)).toBe(false);
  });

  it('an engine refusal is a 400 or 500 saying "not supported" (a real llama-server 500 among them)', () => {
    expect(
      refusedImage({
        status: 500,
        body: {
          error: {
            code: 500,
            message: 'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
            type: 'server_error',
          },
        },
      }),
    ).toBe(true);
    expect(
      refusedImage({
        status: 400,
        body: { error: { message: "engine for model 'x' answered 400: image input is not supported" } },
      }),
    ).toBe(true);
    expect(refusedImage({ status: 400, body: { error: 'Image input Not Supported' } })).toBe(true);
    expect(refusedImage({ status: 500, body: { error: { message: 'out of memory' } } })).toBe(false);
    expect(refusedImage({ status: 503, body: { error: { message: 'not supported' } } })).toBe(false);
    expect(
      refusedImage({
        status: 200,
        get body(): unknown {
          throw new Error("a 2xx answer's body is not read");
        },
      }),
    ).toBe(false);
  });

  it('no guardian: a 400 naming the model and how to set one', () => {
    const e = noGuardian(
      { kind: 'local', clusterId: 'llama', nodeId: 'a', localId: 'llama', backend: 'sim', names: [] },
      'detected',
    );
    expect(e.status).toBe(400);
    expect(e.code).toBe('guardian_required');
    expect(e.message).toMatch(/'llama' on node 'a' is text-only.*Guardians card.*PUT \/router\/v1\/site\/guardians/);
  });
});
