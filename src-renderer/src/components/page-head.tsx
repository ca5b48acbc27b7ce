import type { ReactNode } from 'react';
import { formatClock } from '../format';

/** The head of every screen: title, optional count, when it was last read, and a Refresh that only re-reads. */
export function PageHead(props: {
  /** Test-id and element-id prefix, e.g. `runtime` → `runtime-title`, `runtime-updated`, `runtime-refresh`. */
  id: string;
  title: string;
  count?: number | null;
  fetchedAt: number | null | undefined;
  loading: boolean;
  onRefresh(): void;
  refreshTitle?: string;
  /** The screen's own buttons (Add model), before Refresh. */
  actions?: ReactNode;
}) {
  const { id } = props;
  return (
    <div className="page-head">
      <h1 id={`${id}-title`}>{props.title}</h1>
      {props.count !== undefined && props.count !== null && (
        <span className="count" data-testid={`${id}-count`}>
          {props.count}
        </span>
      )}
      <span className="spacer" />
      {props.actions}
      <span className="muted small" data-testid={`${id}-updated`}>
        updated {formatClock(props.fetchedAt ?? null)}
      </span>
      <button
        type="button"
        onClick={props.onRefresh}
        disabled={props.loading}
        data-testid={`${id}-refresh`}
        title={props.refreshTitle}
      >
        {props.loading ? 'Refreshing…' : 'Refresh'}
      </button>
    </div>
  );
}
