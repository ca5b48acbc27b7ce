/**
 * The link picker (UI-3, LINK-3): for an anchor model, every model of the lane on other nodes, labelled `same weights`
 * (model hash equals the anchor's) or `different weights`. Ineligible candidates are listed disabled with the reason,
 * never omitted; the rules are link-validate.ts's, so an enabled candidate saves (with the acknowledgement when flagged).
 */
import type { LinkCandidate, LinkCandidateList } from '../../contract';
import type { ClusterEntry } from '../../registry';
import type { LendingLane, ModelRef } from '../types';
import { toEnd } from './link-schema';
import {
  acknowledgementError,
  catalogModels,
  describeRef,
  type ExistingLink,
  endError,
  findModel,
  helperAcknowledged,
  type LinkResult,
  laneProblem,
  pairError,
  weightsOf,
} from './link-validate';

/** `owner`: the anchor lends and the candidates are helpers; `helper`: the anchor borrows and the candidates are owners. */
export type AnchorRole = 'owner' | 'helper';

export function linkCandidates(
  anchor: ModelRef,
  lane: LendingLane,
  catalog: ClusterEntry[],
  existing: ExistingLink[],
  anchorRole: AnchorRole = 'owner',
): LinkResult<LinkCandidateList> {
  const a = findModel(catalog, anchor);
  if (!a)
    return {
      ok: false,
      error: {
        status: 404,
        code: 'model_not_found',
        message: `${describeRef(anchor)} is not a model of the cluster`,
        field: 'anchor',
      },
    };
  const wrong = laneProblem(a.record, lane);
  if (wrong)
    return {
      ok: false,
      error: { status: 400, code: 'wrong_lane', message: `${describeRef(anchor)} ${wrong}`, field: 'anchor' },
    };
  const candidateRole: AnchorRole = anchorRole === 'owner' ? 'helper' : 'owner';
  const anchorProblem = endError(anchorRole, a, lane);

  const candidates = catalogModels(catalog)
    .filter((c) => c.ref.nodeId !== anchor.nodeId && laneProblem(c.record, lane) === null)
    .sort((x, y) =>
      x.ref.nodeId < y.ref.nodeId
        ? -1
        : x.ref.nodeId > y.ref.nodeId
          ? 1
          : x.ref.model < y.ref.model
            ? -1
            : x.ref.model > y.ref.model
              ? 1
              : 0,
    )
    .map((c): LinkCandidate => {
      const [owner, helper] = anchorRole === 'owner' ? [a, c] : [c, a];
      const weights = weightsOf(a.record, c.record);
      // The candidate's own problem first: it is what this row is about; then the anchor's, then the pair's.
      const problem = endError(candidateRole, c, lane) ?? anchorProblem ?? pairError(owner, helper, lane, existing);
      const ackNeeded = !problem && weights === 'different' && !helperAcknowledged(helper.ref, existing);
      return {
        ...toEnd(c.ref),
        public_id: c.publicId,
        weights,
        label: weights === 'same' ? 'same weights' : 'different weights',
        disabled: problem !== null,
        reason: problem?.message ?? (ackNeeded ? acknowledgementError(owner, helper).message : null),
        code: problem?.code ?? (ackNeeded ? 'acknowledgement_required' : null),
        acknowledgement_required: ackNeeded,
      };
    });

  return {
    ok: true,
    value: {
      lane,
      anchor: { ...toEnd(a.ref), public_id: a.publicId, model_hash: a.record.modelHash },
      anchor_role: anchorRole,
      candidates,
    },
  };
}
