import { useReducer } from 'react';
import type { ClusterModel, LinkLane } from '../../../../src-router/contract';
import { canSave, initialLinkDraft, linkDraftReducer, planSave } from '../../links/link-draft';
import { anchorOptions, candidateViews, endKey, FLAG_HINT, NO_ANCHORS, NO_CANDIDATES } from '../../links/links-view';
import { useAppStore } from '../../store/use-app-store';
import { CandidateList } from './candidate-list';

/**
 * A new link in one lane (UI-3): the owner from the merged catalog, then a helper among the candidates the node
 * lists, the two flags (LINK-4), and the different-weights acknowledgement when the node asks for it (LINK-3).
 */
export function LinkPicker({ lane, models }: { lane: LinkLane; models: ClusterModel[] | null }) {
  const candidates = useAppStore((s) => s.links[lane].candidates);
  const writing = useAppStore((s) => s.links[lane].writing);
  const fetchCandidates = useAppStore((s) => s.fetchCandidates);
  const createLink = useAppStore((s) => s.createLink);
  const [draft, dispatch] = useReducer(linkDraftReducer, null, () => initialLinkDraft());
  const anchors = anchorOptions(models, lane);
  const views =
    draft.anchor && candidates && endKey(candidates.anchor) === endKey(draft.anchor)
      ? candidateViews(candidates.list)
      : [];

  async function save() {
    const plan = planSave(draft);
    if (!plan.ok) return dispatch({ type: 'save-failed', code: null, message: plan.message });
    dispatch({ type: 'save-start' });
    const result = await createLink(lane, plan.body);
    if (result.ok) dispatch({ type: 'saved' });
    else dispatch({ type: 'save-failed', code: result.failure.code ?? null, message: result.failure.message });
  }

  return (
    <div className="link-picker" data-testid={`link-picker-${lane}`}>
      <h3>New link</h3>
      <div className="control-row">
        <label className="control-label" htmlFor={`anchor-${lane}`}>
          Owner (lends)
        </label>
        <select
          id={`anchor-${lane}`}
          value={draft.anchor ? endKey(draft.anchor) : ''}
          onChange={(e) => {
            const anchor = anchors.find((a) => a.key === e.target.value)?.end ?? null;
            dispatch({ type: 'anchor', anchor });
            void fetchCandidates(lane, anchor);
          }}
          data-testid="link-anchor"
        >
          <option value="">choose a model…</option>
          {anchors.map((a) => (
            <option key={a.key} value={a.key}>
              {a.label}
            </option>
          ))}
        </select>
        {models && anchors.length === 0 && <span className="muted small">{NO_ANCHORS}</span>}
      </div>
      {draft.anchor && (
        <div className="control-row align-top">
          <span className="control-label">Helper (borrows)</span>
          <div className="grow">
            {candidates?.failure && <p className="error-text small">{candidates.failure.message}</p>}
            {candidates?.loading && views.length === 0 && <p className="muted small">Reading candidates…</p>}
            {candidates?.list && views.length === 0 && <p className="muted small">{NO_CANDIDATES}</p>}
            {views.length > 0 && (
              <CandidateList
                name={`helper-${lane}`}
                candidates={views}
                chosen={draft.helper}
                onChoose={(helper) => dispatch({ type: 'helper', helper })}
              />
            )}
          </div>
        </div>
      )}
      {anchors.length > 0 && (
        <>
          <div className="control-row">
            <span className="control-label">Flags</span>
            <label className="check" title={FLAG_HINT.load_if_unloaded}>
              <input
                type="checkbox"
                checked={draft.loadIfUnloaded}
                onChange={(e) => dispatch({ type: 'flag', flag: 'loadIfUnloaded', value: e.target.checked })}
                data-testid="new-link-load"
              />
              load if unloaded
            </label>
            <label className="check" title={FLAG_HINT.restore_after_borrow}>
              <input
                type="checkbox"
                checked={draft.restoreAfterBorrow}
                onChange={(e) => dispatch({ type: 'flag', flag: 'restoreAfterBorrow', value: e.target.checked })}
                data-testid="new-link-restore"
              />
              restore after borrow
            </label>
          </div>
          {draft.ackMessage && (
            <div className="ack-box" role="alert" data-testid="link-ack">
              <p data-testid="link-ack-message">{draft.ackMessage}</p>
              <label className="check">
                <input
                  type="checkbox"
                  checked={draft.acknowledged}
                  onChange={(e) => dispatch({ type: 'acknowledge', value: e.target.checked })}
                  data-testid="link-ack-checkbox"
                />
                I understand: clients may get different output for the same model ID, and nothing will flag it.
              </label>
            </div>
          )}
          {draft.error && (
            <p className="error-text small save-error" role="alert" data-testid="link-save-error">
              {draft.error}
            </p>
          )}
          <div className="control-row actions">
            <button
              type="button"
              className="primary"
              disabled={!canSave(draft) || writing}
              onClick={() => void save()}
              data-testid="link-save"
            >
              {draft.phase === 'saving' ? 'Saving…' : 'Save link'}
            </button>
            {draft.phase === 'saved' && (
              <span className="muted small" role="status" data-testid="link-saved">
                Saved. The master pushes it to every node.
              </span>
            )}
          </div>
        </>
      )}
    </div>
  );
}
