import { type FormEvent, useState } from 'react';
import {
  activeFilterCount,
  type DecisionFilterDraft,
  decisionQuery,
  EMPTY_FILTER,
  eventOptions,
  type FilterField,
  KINDS,
  OUTCOMES,
  REASONS,
  TIME_RANGES,
} from '../../lending/decision-filters';

interface Props {
  nodes: string[];
  models: string[];
  /** Called with the query string of the filters applied. */
  onApply(query: string): void;
}

type Key = Exclude<keyof DecisionFilterDraft, 'range' | 'from' | 'to'>;

/** The decision log's filters (UI-1): applied on Apply; Clear goes back to the whole log. */
export function DecisionFiltersForm({ nodes, models, onApply }: Props) {
  const [draft, setDraft] = useState<DecisionFilterDraft>(EMPTY_FILTER);
  const [error, setError] = useState<{ message: string; field: FilterField } | null>(null);
  const set = (patch: Partial<DecisionFilterDraft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    setError(null);
  };

  function apply(next: DecisionFilterDraft) {
    const plan = decisionQuery(next, Date.now());
    if (!plan.ok) return setError({ message: plan.message, field: plan.field });
    setError(null);
    onApply(plan.query);
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
  };

  const select = (key: Key, label: string, options: readonly string[], anyLabel = 'any') => (
    <label className="filter">
      <span>{label}</span>
      <select value={draft[key]} onChange={(e) => set({ [key]: e.target.value })} data-testid={`filter-${key}`}>
        <option value="">{anyLabel}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <form className="filters" onSubmit={submit} data-testid="decision-filters">
      <label className="filter">
        <span>Time</span>
        <select
          value={draft.range}
          onChange={(e) => set({ range: e.target.value as DecisionFilterDraft['range'] })}
          data-testid="filter-range"
        >
          {TIME_RANGES.map((r) => (
            <option key={r.id} value={r.id}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
      {draft.range === 'custom' && (
        <>
          <label className="filter">
            <span>From</span>
            <input
              type="datetime-local"
              step={1}
              value={draft.from}
              aria-invalid={error?.field === 'from'}
              onChange={(e) => set({ from: e.target.value })}
              data-testid="filter-from"
            />
          </label>
          <label className="filter">
            <span>To</span>
            <input
              type="datetime-local"
              step={1}
              value={draft.to}
              aria-invalid={error?.field === 'to'}
              onChange={(e) => set({ to: e.target.value })}
              data-testid="filter-to"
            />
          </label>
        </>
      )}
      {select('node', 'Node', nodes)}
      {select('model', 'Model', models)}
      {select('kind', 'Kind', KINDS)}
      {select('event', 'Event', eventOptions(draft.kind))}
      {(draft.kind === '' || draft.kind === 'plan') && select('outcome', 'Outcome', OUTCOMES)}
      {select('reason', 'Reason', REASONS)}
      <div className="filter-actions">
        <button type="submit" className="primary" data-testid="filter-apply">
          Apply
        </button>
        <button
          type="button"
          disabled={activeFilterCount(draft) === 0}
          onClick={() => {
            setDraft(EMPTY_FILTER);
            apply(EMPTY_FILTER);
          }}
          data-testid="filter-clear"
        >
          Clear
        </button>
      </div>
      {error && (
        <p className="error-text small filter-error" role="alert" data-testid="filter-error">
          {error.message}
        </p>
      )}
    </form>
  );
}
