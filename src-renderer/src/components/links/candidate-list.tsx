import type { LinkEnd } from '../../../../src-router/contract';
import { type CandidateView, endKey } from '../../links/links-view';

/** The picker's candidates (UI-3): every one listed with its weights label; ineligible ones disabled with the reason. */
export function CandidateList({
  name,
  candidates,
  chosen,
  onChoose,
}: {
  name: string;
  candidates: CandidateView[];
  chosen: LinkEnd | null;
  onChoose(end: LinkEnd): void;
}) {
  const chosenKey = chosen ? endKey(chosen) : null;
  return (
    <ul className="candidates" data-testid="link-candidates">
      {candidates.map((c) => (
        <li
          key={c.key}
          className={c.disabled ? 'disabled' : undefined}
          data-testid="link-candidate"
          data-node={c.end.node_id}
          data-model={c.end.model}
          data-disabled={c.disabled}
        >
          <label>
            <input
              type="radio"
              name={name}
              checked={chosenKey === c.key}
              disabled={c.disabled}
              onChange={() => onChoose(c.end)}
              data-testid="link-candidate-radio"
            />
            <span className="candidate-name">{c.label}</span>
            <span className="muted small">{c.publicId}</span>
            <span className={`pill pill-${c.weightsTone}`} data-testid="link-candidate-weights">
              {c.weights}
            </span>
            {c.needsAck && (
              <span className="tag" title="the first link to this model with different weights must be acknowledged">
                needs acknowledgement
              </span>
            )}
          </label>
          {c.reason && (
            <p className="candidate-reason small" data-testid="link-candidate-reason">
              {c.reason}
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
