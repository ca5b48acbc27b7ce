import type {
  GuardianDelete,
  GuardianPut,
  GuardianRef,
  GuardianScope,
  GuardianSetting,
  GuardiansView,
} from '../../../src-router/contract';
import { formatModelRef, type PillTone } from '../format';

/**
 * The Guardians card of the Lending tab (UI-4, GUARD-1), pure, from `GET /router/v1/site/guardians`: the settings
 * (cluster default, per node, per model), the effective guardian of every text-only model and the setting it came
 * from, the guardian picker (only the candidates the node lists) and the form's draft with the API's field errors.
 * Tested in renderer-guardians-view.test.ts.
 */

export const NO_GUARDIAN = 'none — image requests are refused';
export const NO_CANDIDATES = 'No multimodal text model in the cluster: nothing can be a guardian.';
export const NO_TEXT_ONLY = 'No text-only model in the cluster: no model needs a guardian.';

export const refKey = (r: { node_id: string; model: string }) => `${r.node_id}/${r.model}`;

const SCOPE_LABEL: Record<GuardianScope, string> = {
  cluster: 'cluster default',
  node: 'node setting',
  model: 'model setting',
};

/** `model-vl (vl on master)` when the catalog names it, else `vl on master`. */
function guardianLabel(view: GuardiansView, ref: GuardianRef): string {
  const c = view.candidates.find((x) => refKey(x) === refKey(ref));
  return c ? `${c.public_id} (${formatModelRef(ref.node_id, ref.model)})` : formatModelRef(ref.node_id, ref.model);
}

export interface GuardianSettingView {
  key: string;
  scope: GuardianScope;
  /** `whole cluster`, `node gpu-b`, `b on gpu-b`. */
  target: string;
  guardian: string;
  /** The guardian is not in the catalog now (its node left, or the model is gone). */
  missing: boolean;
  remove: GuardianDelete;
  updatedAt: string;
  /** The stored setting, loaded into the form by Change. */
  setting: GuardianSetting;
}

export const settingKey = (s: Pick<GuardianSetting, 'scope' | 'node_id' | 'model'>) =>
  `${s.scope}|${s.node_id ?? ''}|${s.model ?? ''}`;

const deleteBody = (s: Pick<GuardianSetting, 'scope' | 'node_id' | 'model'>): GuardianDelete =>
  s.scope === 'cluster'
    ? { scope: 'cluster' }
    : s.scope === 'node'
      ? { scope: 'node', node_id: s.node_id ?? '' }
      : { scope: 'model', node_id: s.node_id ?? '', model: s.model ?? '' };

export function guardianSettingRows(view: GuardiansView): GuardianSettingView[] {
  return view.settings.map((s) => ({
    key: settingKey(s),
    scope: s.scope,
    target:
      s.scope === 'cluster'
        ? 'whole cluster'
        : s.scope === 'node'
          ? `node ${s.node_id}`
          : formatModelRef(s.node_id, s.model),
    guardian: guardianLabel(view, s.guardian),
    missing: !view.candidates.some((c) => refKey(c) === refKey(s.guardian)),
    remove: deleteBody(s),
    updatedAt: s.updated_at,
    setting: s,
  }));
}

export interface EffectiveGuardianView {
  key: string;
  model: string;
  node: string;
  guardian: string;
  /** Why: which setting is in force. */
  from: string;
  tone: PillTone;
}

/** Every text-only model with the guardian that answers its image requests, and why. */
export function effectiveGuardianRows(view: GuardiansView): EffectiveGuardianView[] {
  return view.effective.map((e) => ({
    key: refKey(e),
    model: `${e.public_id} (${e.model})`,
    node: e.node_id,
    guardian: e.guardian ? guardianLabel(view, e.guardian) : NO_GUARDIAN,
    from: e.from
      ? SCOPE_LABEL[e.from] + (e.available ? '' : ' — guardian not in the catalog now')
      : 'no setting applies',
    tone: !e.guardian ? 'idle' : e.available ? 'ok' : 'bad',
  }));
}

export interface Option {
  key: string;
  label: string;
}

/** The guardian picker: only the candidates (multimodal text models of the catalog). */
export const candidateOptions = (view: GuardiansView): Option[] =>
  view.candidates.map((c) => ({ key: refKey(c), label: `${c.public_id} (${formatModelRef(c.node_id, c.model)})` }));

/**
 * Targets of the model scope: the text-only models, then the multimodal ones marked as reading images themselves
 * (the node refuses them with a 400 under the model field: a guardian answers for text-only models).
 */
export const modelTargetOptions = (view: GuardiansView): Option[] => [
  ...view.effective.map((e) => ({ key: refKey(e), label: `${e.public_id} (${formatModelRef(e.node_id, e.model)})` })),
  ...view.candidates.map((c) => ({
    key: refKey(c),
    label: `${c.public_id} (${formatModelRef(c.node_id, c.model)}) — reads images itself`,
  })),
];

/** The form: one setting to create or replace. */
export interface GuardianDraft {
  scope: GuardianScope;
  /** The node of the node scope. */
  node: string;
  /** `node/model` of the model scope. */
  target: string;
  /** `node/model` of the guardian. */
  guardian: string;
  phase: 'editing' | 'saving' | 'saved' | 'error';
  /** The last refusal, with the body field the node named (`guardian`, `node_id`, `model`), null for the whole form. */
  error: { field: string | null; message: string } | null;
}

export const initialGuardianDraft = (): GuardianDraft => ({
  scope: 'cluster',
  node: '',
  target: '',
  guardian: '',
  phase: 'editing',
  error: null,
});

export type GuardianDraftAction =
  | { type: 'field'; field: 'scope' | 'node' | 'target' | 'guardian'; value: string }
  /** Load a stored setting into the form, to change its guardian. */
  | { type: 'edit'; setting: Pick<GuardianSetting, 'scope' | 'node_id' | 'model' | 'guardian'> }
  | { type: 'save-start' }
  | { type: 'saved' }
  | { type: 'save-failed'; field: string | null; message: string };

export function guardianDraftReducer(d: GuardianDraft, a: GuardianDraftAction): GuardianDraft {
  switch (a.type) {
    case 'field':
      return { ...d, [a.field]: a.value, phase: 'editing', error: null };
    case 'edit':
      return {
        scope: a.setting.scope,
        node: a.setting.scope === 'node' ? (a.setting.node_id ?? '') : '',
        target: a.setting.scope === 'model' ? `${a.setting.node_id}/${a.setting.model}` : '',
        guardian: refKey(a.setting.guardian),
        phase: 'editing',
        error: null,
      };
    case 'save-start':
      return { ...d, phase: 'saving', error: null };
    case 'saved':
      return { ...initialGuardianDraft(), phase: 'saved' };
    case 'save-failed':
      return { ...d, phase: 'error', error: { field: a.field, message: a.message } };
  }
}

const splitKey = (key: string): GuardianRef | null => {
  const i = key.indexOf('/');
  return i > 0 && i < key.length - 1 ? { node_id: key.slice(0, i), model: key.slice(i + 1) } : null;
};

/** The PUT body of the draft, or the field still to choose (shown where that field is). */
export function planGuardianPut(
  d: GuardianDraft,
): { ok: true; body: GuardianPut } | { ok: false; field: string; message: string } {
  const guardian = splitKey(d.guardian);
  if (d.scope === 'node' && !d.node) return { ok: false, field: 'node_id', message: 'choose a node' };
  const target = splitKey(d.target);
  if (d.scope === 'model' && !target) return { ok: false, field: 'model', message: 'choose a text-only model' };
  if (!guardian) return { ok: false, field: 'guardian', message: 'choose a guardian' };
  if (d.scope === 'cluster') return { ok: true, body: { scope: 'cluster', guardian } };
  if (d.scope === 'node') return { ok: true, body: { scope: 'node', node_id: d.node, guardian } };
  return { ok: true, body: { scope: 'model', node_id: target!.node_id, model: target!.model, guardian } };
}

/** Which form field an API error belongs under: the node's `param` (a zod path like `guardian.model` counts as `guardian`). */
export function errorField(param: string | null | undefined): string | null {
  if (!param) return null;
  const head = param.split('.')[0];
  return ['guardian', 'node_id', 'model', 'scope'].includes(head) ? head : null;
}

/** The error to show under `field` (the form's general error when the node named no field of the form). */
export const fieldError = (d: GuardianDraft, field: string | null): string | null =>
  d.error && d.error.field === field ? d.error.message : null;
