/**
 * Pure validation of a new link against the cluster catalog and the links already stored (LINK-1..3, LLM-1).
 * No IO: the caller passes the catalog's entries and the store's list. The picker (link-candidates.ts) uses the same
 * rules, so what it offers enabled is exactly what saves.
 */
import { type LinkCreateInput, type LinkWeights, type NodeModelRecord, RouterError } from '../../contract';
import type { ClusterEntry } from '../../registry';
import type { LendingLane, ModelRef } from '../types';
import { fromEnd, type NewLink, type StoredLink, sameRef } from './link-schema';

export type LinkErrorCode =
  | 'model_not_found'
  | 'self_link'
  | 'same_node'
  | 'wrong_lane'
  | 'ineligible'
  | 'multimodal_mismatch'
  | 'duplicate_link'
  | 'acknowledgement_required';

export interface LinkError {
  status: 400 | 404 | 409;
  code: LinkErrorCode;
  message: string;
  /** The body field at fault (`owner`, `helper`, `acknowledge_different_weights`), null when it is the pair. */
  field: string | null;
}

export type LinkResult<T> = { ok: true; value: T } | { ok: false; error: LinkError };

/** The links a validation needs to see (the store's list). */
export type ExistingLink = Pick<StoredLink, 'lane' | 'owner' | 'helper' | 'weights' | 'acknowledged'>;

/** A model of the catalog, found by node and local ID. */
export interface CatalogModel {
  ref: ModelRef;
  publicId: string;
  record: NodeModelRecord;
}

export const describeRef = (r: ModelRef) => `${r.model} on ${r.nodeId}`;

export function findModel(catalog: ClusterEntry[], ref: ModelRef): CatalogModel | undefined {
  for (const entry of catalog) {
    const replica = entry.replicas.find((r) => r.nodeId === ref.nodeId && r.record.localId === ref.model);
    if (replica) return { ref: { nodeId: ref.nodeId, model: ref.model }, publicId: entry.id, record: replica.record };
  }
  return undefined;
}

/** Every model of the catalog, one per node and local ID. */
export function catalogModels(catalog: ClusterEntry[]): CatalogModel[] {
  return catalog.flatMap((entry) =>
    entry.replicas.map((r) => ({
      ref: { nodeId: r.nodeId, model: r.record.localId },
      publicId: entry.id,
      record: r.record,
    })),
  );
}

const IMAGE_CAPS = ['image', 'video'];
const TEXT_CAPS = ['text', 'multimodal'];

export const isMultimodal = (r: NodeModelRecord) => r.capabilities.includes('multimodal');

/** LINK-2: image links join image/video models, text links join text models. Null when the model fits the lane. */
export function laneProblem(record: NodeModelRecord, lane: LendingLane): string | null {
  const caps = lane === 'image' ? IMAGE_CAPS : TEXT_CAPS;
  if (record.capabilities.some((c) => caps.includes(c))) return null;
  const has = record.capabilities.join(', ') || 'none';
  return lane === 'image'
    ? `is not an image or video model (capabilities: ${has}); image links join image/video models only`
    : `is not a text model (capabilities: ${has}); text links join text models only`;
}

/**
 * LLM-1: a text model may be linked only when it serves one request at a time and states a context window.
 * The record's `parallel` is the config's `parallel`, else vLLM `settings.max_number_sequences`; its `contextsize`
 * the config's `contextsize`, else vLLM `settings.max_model_length`. Image models are always eligible.
 */
export function eligibilityProblem(record: NodeModelRecord, lane: LendingLane): string | null {
  if (lane !== 'text') return null;
  if (record.parallel !== null && record.parallel !== 1) {
    return `serves ${record.parallel} requests at once (parallel / vllm.settings.max_number_sequences ${record.parallel}); a text link needs a model that serves one request at a time (1 or unset)`;
  }
  if (record.contextsize === null)
    return 'states no context window; set contextsize (or vllm.settings.max_model_length for vLLM)';
  return null;
}

/** LINK-3: same weights only when both model hashes are known and equal; an unknown hash counts as different. */
export function weightsOf(a: NodeModelRecord, b: NodeModelRecord): LinkWeights {
  return a.modelHash !== null && b.modelHash !== null && a.modelHash === b.modelHash ? 'same' : 'different';
}

function weightsDetail(owner: CatalogModel, helper: CatalogModel): string {
  const unknown = [owner, helper].filter((m) => m.record.modelHash === null).map((m) => describeRef(m.ref));
  return unknown.length
    ? `the model hash of ${unknown.join(' and ')} is not known, so the weights are treated as different`
    : 'their model hashes differ';
}

/** An earlier link to this helper model already carries the different-weights acknowledgement: do not ask again. */
export function helperAcknowledged(helper: ModelRef, existing: ExistingLink[]): boolean {
  return existing.some((l) => sameRef(l.helper, helper) && l.acknowledged && l.weights === 'different');
}

const fail = (
  status: LinkError['status'],
  code: LinkErrorCode,
  message: string,
  field: string | null,
): { ok: false; error: LinkError } => ({
  ok: false,
  error: { status, code, message, field },
});

/** Problems of one end on its own (lane, LLM-1), as a 400. */
export function endError(role: 'owner' | 'helper', m: CatalogModel, lane: LendingLane): LinkError | null {
  const wrong = laneProblem(m.record, lane);
  if (wrong) return { status: 400, code: 'wrong_lane', message: `${role} ${describeRef(m.ref)} ${wrong}`, field: role };
  const ineligible = eligibilityProblem(m.record, lane);
  if (ineligible)
    return {
      status: 400,
      code: 'ineligible',
      message: `${role} ${describeRef(m.ref)} is not eligible for an LLM link: it ${ineligible}`,
      field: role,
    };
  return null;
}

/** Problems of the pair once both ends are fine on their own: multimodal (LLM-1), duplicate (409). */
export function pairError(
  owner: CatalogModel,
  helper: CatalogModel,
  lane: LendingLane,
  existing: ExistingLink[],
): LinkError | null {
  if (lane === 'text' && isMultimodal(owner.record) !== isMultimodal(helper.record)) {
    const [mm, plain] = isMultimodal(owner.record) ? [owner, helper] : [helper, owner];
    return {
      status: 400,
      code: 'multimodal_mismatch',
      message: `${describeRef(mm.ref)} is multimodal and ${describeRef(plain.ref)} is not; a multimodal model links only with another multimodal model`,
      field: 'helper',
    };
  }
  if (existing.some((l) => l.lane === lane && sameRef(l.owner, owner.ref) && sameRef(l.helper, helper.ref))) {
    return {
      status: 409,
      code: 'duplicate_link',
      message: `a ${lane} link from ${describeRef(owner.ref)} to ${describeRef(helper.ref)} already exists`,
      field: null,
    };
  }
  return null;
}

/** The 409 a first link to a different-weights helper model gets without the acknowledgement (LINK-3). */
export function acknowledgementError(owner: CatalogModel, helper: CatalogModel): LinkError {
  return {
    status: 409,
    code: 'acknowledgement_required',
    message:
      `${describeRef(helper.ref)} does not have the same weights as ${describeRef(owner.ref)} (${weightsDetail(owner, helper)}). ` +
      `Clients asking for ${owner.publicId} may receive different output for the same model ID, and nothing will flag it. ` +
      'Resend with acknowledge_different_weights: true to save the link.',
    field: 'acknowledge_different_weights',
  };
}

/**
 * Validates one link of `lane` (the lane comes from the path: `/routing-groups` image, `/text-routing-groups` text).
 * Order: ends exist (404), owner ≠ helper, different nodes, lane, LLM-1 eligibility, multimodal (400), duplicate,
 * acknowledgement (409). The reverse direction is a separate link, never implied (LINK-1).
 */
export function validateLink(
  input: LinkCreateInput,
  lane: LendingLane,
  catalog: ClusterEntry[],
  existing: ExistingLink[],
): LinkResult<NewLink> {
  const ownerRef = fromEnd(input.owner);
  const helperRef = fromEnd(input.helper);
  const owner = findModel(catalog, ownerRef);
  if (!owner)
    return fail(404, 'model_not_found', `owner ${describeRef(ownerRef)} is not a model of the cluster`, 'owner');
  const helper = findModel(catalog, helperRef);
  if (!helper)
    return fail(404, 'model_not_found', `helper ${describeRef(helperRef)} is not a model of the cluster`, 'helper');
  if (sameRef(ownerRef, helperRef))
    return fail(400, 'self_link', `a model cannot be linked to itself (${describeRef(ownerRef)})`, 'helper');
  if (ownerRef.nodeId === helperRef.nodeId) {
    return fail(
      400,
      'same_node',
      `owner and helper are both on ${ownerRef.nodeId}; a link lends work to a model on another node`,
      'helper',
    );
  }
  const problem =
    endError('owner', owner, lane) ?? endError('helper', helper, lane) ?? pairError(owner, helper, lane, existing);
  if (problem) return { ok: false, error: problem };

  const weights = weightsOf(owner.record, helper.record);
  const given = input.acknowledge_different_weights === true;
  const inherited = helperAcknowledged(helperRef, existing);
  if (weights === 'different' && !given && !inherited) return { ok: false, error: acknowledgementError(owner, helper) };
  return {
    ok: true,
    value: {
      lane,
      owner: ownerRef,
      helper: helperRef,
      loadIfUnloaded: input.load_if_unloaded ?? true,
      restoreAfterBorrow: input.restore_after_borrow ?? false,
      weights,
      acknowledged: given || (weights === 'different' && inherited),
    },
  };
}

/** The router error the site API answers a failed validation with (`param` names the field). */
export const linkErrorToRouterError = (e: LinkError) =>
  new RouterError(e.status, e.code, e.message, 'invalid_request_error', e.field);
