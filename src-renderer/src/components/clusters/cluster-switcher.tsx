import { useEffect, useRef, useState } from 'react';
import { type ClusterDot, clusterOptions, DOT_LABEL } from '../../clusters/switcher-view';
import { useClustersStore } from '../../store/use-clusters-store';
import { AddClusterDialog } from './add-cluster-dialog';

function Dot({ dot, title }: { dot: ClusterDot; title: string }) {
  return (
    <span
      className={`cluster-dot cluster-dot-${dot}`}
      data-testid="cluster-dot"
      data-dot={dot}
      title={title}
      aria-label={DOT_LABEL[dot]}
    />
  );
}

/** The top bar's cluster switcher (UI-5): local first, then every profile with its status dot; add, edit and remove. */
export function ClusterSwitcher() {
  const list = useClustersStore((s) => s.list);
  const selected = useClustersStore((s) => s.selected);
  const select = useClustersStore((s) => s.select);
  const removeCluster = useClustersStore((s) => s.removeCluster);
  const failure = useClustersStore((s) => s.failure);
  const [open, setOpen] = useState(false);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<string | null>(null);
  const root = useRef<HTMLDivElement>(null);
  // The menu closes on Escape or a click anywhere else.
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    const onDown = (e: MouseEvent) => !root.current?.contains(e.target as Node) && setOpen(false);
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onDown);
    };
  }, [open]);
  const options = clusterOptions(list, selected);
  const current = options.find((o) => o.selected)!;
  const editingView = list?.find((c) => c.id === editing && !c.local);

  return (
    <div className="cluster-switcher" data-testid="cluster-switcher" ref={root}>
      <button
        type="button"
        className="cluster-current"
        aria-haspopup="true"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        data-testid="cluster-current"
        data-cluster-id={current.id}
      >
        <Dot dot={current.dot} title={current.title} />
        <span data-testid="cluster-current-name">{current.label}</span> ▾
      </button>
      {open && (
        <div className="cluster-menu card" role="menu" data-testid="cluster-menu">
          {failure && <p className="error-text small">clusters: {failure.message}</p>}
          <ul>
            {options.map((o) => (
              <li key={o.id} data-testid="cluster-option" data-cluster-id={o.id} data-dot={o.dot}>
                <button
                  type="button"
                  role="menuitemradio"
                  aria-checked={o.selected}
                  className="cluster-pick"
                  title={o.title}
                  data-testid="cluster-pick"
                  onClick={() => {
                    select(o.id);
                    setOpen(false);
                  }}
                >
                  <Dot dot={o.dot} title={o.title} />
                  <span data-testid="cluster-name">{o.label}</span>
                  {o.dot === 'bad' && (
                    <span className="error-text small" data-testid="cluster-error">
                      {' '}
                      {o.title}
                    </span>
                  )}
                </button>
                {!o.local && (
                  <button
                    type="button"
                    className="link-button small"
                    data-testid="cluster-edit"
                    title={`Change the name, URL or token of ${o.label}`}
                    onClick={() => {
                      setEditing(o.id);
                      setOpen(false);
                    }}
                  >
                    edit
                  </button>
                )}
                {!o.local && (
                  <button
                    type="button"
                    className="link-button small"
                    data-testid="cluster-remove"
                    title={`Forget the profile of ${o.label}`}
                    onClick={async () => {
                      const r = await removeCluster(o.id);
                      setRemoveError(r.ok ? null : r.failure.message);
                    }}
                  >
                    remove
                  </button>
                )}
              </li>
            ))}
          </ul>
          {removeError && (
            <p className="error-text small" data-testid="cluster-remove-error">
              {removeError}
            </p>
          )}
          <button
            type="button"
            data-testid="cluster-add"
            onClick={() => {
              setAdding(true);
              setOpen(false);
            }}
          >
            Add cluster…
          </button>
        </div>
      )}
      {adding && <AddClusterDialog onClose={() => setAdding(false)} />}
      {editingView && <AddClusterDialog editing={editingView} onClose={() => setEditing(null)} />}
    </div>
  );
}
