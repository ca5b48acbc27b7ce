import { describe, expect, it } from 'vitest';
import {
  candidateOptions,
  effectiveGuardianRows,
  errorField,
  fieldError,
  type GuardianDraft,
  guardianDraftReducer,
  guardianSettingRows,
  initialGuardianDraft,
  modelTargetOptions,
  NO_GUARDIAN,
  planGuardianPut,
} from '../../src-renderer/src/lending/guardians-view';
import { nodeBuildRows } from '../../src-renderer/src/lending/lending-view';
import type { GuardiansView } from '../../src-router/contract';

// The Guardians card (UI-4, GUARD-1): settings rows, the effective guardian of each text-only model and why, the
// picker (candidates only), the form's draft and where the node's refusals show.

const VL = { node_id: 'master', model: 'vl' };
const VL_B = { node_id: 'gpu-b', model: 'vl-b' };
const AT = '2025-01-02T12:00:00.000Z';
const view: GuardiansView = {
  version: 4,
  settings: [
    { scope: 'cluster', node_id: null, model: null, guardian: VL, updated_at: AT },
    { scope: 'node', node_id: 'gpu-b', model: null, guardian: VL_B, updated_at: AT },
    { scope: 'model', node_id: 'gpu-c', model: 'c', guardian: { node_id: 'gone', model: 'x' }, updated_at: AT },
  ],
  effective: [
    { node_id: 'master', model: 'a', public_id: 'model-a', guardian: VL, from: 'cluster', available: true },
    { node_id: 'gpu-b', model: 'b', public_id: 'model-b', guardian: VL_B, from: 'node', available: true },
    {
      node_id: 'gpu-c',
      model: 'c',
      public_id: 'model-c',
      guardian: { node_id: 'gone', model: 'x' },
      from: 'model',
      available: false,
    },
    { node_id: 'gpu-d', model: 'd', public_id: 'model-d', guardian: null, from: null, available: false },
  ],
  candidates: [
    { ...VL, public_id: 'model-vl' },
    { ...VL_B, public_id: 'model-vl-b' },
  ],
  nodes: ['master', 'gpu-b', 'gpu-c', 'gpu-d'],
};

describe('guardians view', () => {
  it('settings rows name the target, the guardian by public ID, the body that removes them, and a guardian gone from the catalog', () => {
    expect(guardianSettingRows(view).map((r) => [r.target, r.guardian, r.missing, r.remove])).toEqual([
      ['whole cluster', 'model-vl (vl on master)', false, { scope: 'cluster' }],
      ['node gpu-b', 'model-vl-b (vl-b on gpu-b)', false, { scope: 'node', node_id: 'gpu-b' }],
      ['c on gpu-c', 'x on gone', true, { scope: 'model', node_id: 'gpu-c', model: 'c' }],
    ]);
  });

  it('every text-only model shows its guardian and the setting it came from, or none', () => {
    expect(effectiveGuardianRows(view).map((r) => [r.model, r.guardian, r.from, r.tone])).toEqual([
      ['model-a (a)', 'model-vl (vl on master)', 'cluster default', 'ok'],
      ['model-b (b)', 'model-vl-b (vl-b on gpu-b)', 'node setting', 'ok'],
      ['model-c (c)', 'x on gone', 'model setting — guardian not in the catalog now', 'bad'],
      ['model-d (d)', NO_GUARDIAN, 'no setting applies', 'idle'],
    ]);
    expect(NO_GUARDIAN).toBe('none — image requests are refused');
  });

  it('the picker offers only the candidates; the model scope lists text-only models first', () => {
    expect(candidateOptions(view).map((o) => o.key)).toEqual(['master/vl', 'gpu-b/vl-b']);
    const targets = modelTargetOptions(view);
    expect(targets.map((o) => o.key)).toEqual(['master/a', 'gpu-b/b', 'gpu-c/c', 'gpu-d/d', 'master/vl', 'gpu-b/vl-b']);
    expect(targets.at(-1)!.label).toMatch(/reads images itself/);
  });

  it('the builds table shows each node its guardian settings version, — when not reported', () => {
    const rows = nodeBuildRows([
      { nodeId: 'master', version: '0.1.0', settingsHash: 'a', inSync: true, linksVersion: 1, guardiansVersion: 4 },
      { nodeId: 'gpu-b', version: '0.1.0', settingsHash: 'a', inSync: true, healthy: true },
    ]);
    expect(rows.map((r) => r.guardiansVersion)).toEqual(['4', '—']);
  });
});

describe('guardian form draft', () => {
  const edit = (d: GuardianDraft, field: 'scope' | 'node' | 'target' | 'guardian', value: string) =>
    guardianDraftReducer(d, { type: 'field', field, value });

  it('plans the PUT body of each scope, or names the field still to choose', () => {
    let d = initialGuardianDraft();
    expect(planGuardianPut(d)).toEqual({ ok: false, field: 'guardian', message: 'choose a guardian' });
    d = edit(d, 'guardian', 'gpu-b/vl-b');
    expect(planGuardianPut(d)).toEqual({ ok: true, body: { scope: 'cluster', guardian: VL_B } });
    d = edit(d, 'scope', 'node');
    expect(planGuardianPut(d)).toMatchObject({ ok: false, field: 'node_id' });
    expect(planGuardianPut(edit(d, 'node', 'gpu-c'))).toEqual({
      ok: true,
      body: { scope: 'node', node_id: 'gpu-c', guardian: VL_B },
    });
    d = edit(d, 'scope', 'model');
    expect(planGuardianPut(d)).toMatchObject({ ok: false, field: 'model' });
    expect(planGuardianPut(edit(d, 'target', 'gpu-c/c'))).toEqual({
      ok: true,
      body: { scope: 'model', node_id: 'gpu-c', model: 'c', guardian: VL_B },
    });
  });

  it('Change loads a stored setting; a save clears the form; an edit clears the last error', () => {
    let d = guardianDraftReducer(initialGuardianDraft(), { type: 'edit', setting: view.settings[2] });
    expect(d).toMatchObject({ scope: 'model', target: 'gpu-c/c', guardian: 'gone/x', error: null });
    d = guardianDraftReducer(d, { type: 'save-failed', field: 'guardian', message: 'no model' });
    expect(d.phase).toBe('error');
    expect(fieldError(d, 'guardian')).toBe('no model');
    expect(fieldError(d, 'model')).toBeNull();
    d = edit(d, 'guardian', 'master/vl');
    expect(d.error).toBeNull();
    d = guardianDraftReducer(guardianDraftReducer(d, { type: 'save-start' }), { type: 'saved' });
    expect(d).toEqual({ ...initialGuardianDraft(), phase: 'saved' });
  });

  it("the node's param picks the field an error shows under; anything else is the form's", () => {
    expect(errorField('guardian')).toBe('guardian');
    expect(errorField('guardian.model')).toBe('guardian');
    expect(errorField('node_id')).toBe('node_id');
    expect(errorField('model')).toBe('model');
    expect(errorField(null)).toBeNull();
    expect(errorField('acknowledge')).toBeNull();
  });
});
