import { useState } from 'react';
import type { LinkLane, LinkRecord } from '../../../../src-router/contract';
import { FLAG_HINT, linkRows, NO_LINKS } from '../../links/links-view';
import { useAppStore } from '../../store/use-app-store';

type Flag = 'load_if_unloaded' | 'restore_after_borrow';

/** A lane's stored links (LINK-1, LINK-4): each one-way, its two flags toggled in place, deleted with one click. */
export function LinksTable({ lane, links }: { lane: LinkLane; links: LinkRecord[] }) {
  const updateLink = useAppStore((s) => s.updateLink);
  const deleteLink = useAppStore((s) => s.deleteLink);
  const writing = useAppStore((s) => s.links[lane].writing);
  const [error, setError] = useState<string | null>(null);
  // A flag being written shows its new value until the node's answer is read back (then the store's value shows).
  const [pending, setPending] = useState<Readonly<Record<string, boolean>>>({});

  async function run(action: Promise<{ ok: boolean; failure?: { message: string } }>) {
    setError(null);
    const result = await action;
    if (!result.ok) setError(result.failure?.message ?? 'the node refused');
  }
  async function toggle(id: string, flag: Flag, value: boolean) {
    const key = `${id}:${flag}`;
    setPending((p) => ({ ...p, [key]: value }));
    try {
      await run(updateLink(lane, id, { [flag]: value }));
    } finally {
      setPending(({ [key]: _done, ...rest }) => rest);
    }
  }

  if (links.length === 0) {
    return (
      <p className="muted small" data-testid={`links-empty-${lane}`}>
        {NO_LINKS}
      </p>
    );
  }
  return (
    <>
      {error && (
        <p className="error-text small" role="alert" data-testid={`links-error-${lane}`}>
          {error}
        </p>
      )}
      <table className="data-table compact" data-testid={`links-table-${lane}`}>
        <thead>
          <tr>
            <th scope="col">Owner (lends)</th>
            <th scope="col">Helper (borrows)</th>
            <th scope="col">Weights</th>
            <th scope="col" title={FLAG_HINT.load_if_unloaded}>
              Load if unloaded
            </th>
            <th scope="col" title={FLAG_HINT.restore_after_borrow}>
              Restore after borrow
            </th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Delete</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {linkRows(links).map((l) => (
            <tr key={l.id} data-testid="link-row" data-link-id={l.id}>
              <td className="nowrap" data-testid="link-owner">
                {l.owner}
              </td>
              <td className="nowrap" data-testid="link-helper">
                {l.helper}
              </td>
              <td>
                <span className={`pill pill-${l.weightsTone}`} data-testid="link-weights">
                  {l.weights}
                </span>
              </td>
              {(['load_if_unloaded', 'restore_after_borrow'] as const).map((flag) => {
                const on =
                  pending[`${l.id}:${flag}`] ?? (flag === 'load_if_unloaded' ? l.loadIfUnloaded : l.restoreAfterBorrow);
                return (
                  <td key={flag}>
                    <input
                      type="checkbox"
                      checked={on}
                      disabled={writing}
                      aria-label={`${flag} for ${l.owner} → ${l.helper}`}
                      onChange={(e) => void toggle(l.id, flag, e.target.checked)}
                      data-testid={`link-flag-${flag}`}
                    />
                  </td>
                );
              })}
              <td className="nowrap small" title={l.createdTitle}>
                {l.created}
              </td>
              <td>
                <button
                  type="button"
                  className="danger"
                  disabled={writing}
                  onClick={() => void run(deleteLink(lane, l.id))}
                  data-testid="link-delete"
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
