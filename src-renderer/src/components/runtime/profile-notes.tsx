import type { RoutingViewWire } from '../../../../src-router/contract';
import { profileNotes } from '../../runtime/routing-view';

/** What each metric profile reads, and which strategies stay cold for its pods (ROUTE-4). */
export function ProfileNotes({ view }: { view: RoutingViewWire }) {
  const notes = profileNotes(view);
  if (!notes.length) return null;
  return (
    <details className="profile-notes" data-testid="profile-notes">
      <summary>Metric profiles: what each engine publishes</summary>
      <ul>
        {notes.map((n) => (
          <li key={n.name} data-testid={`profile-note-${n.name}`} data-cold={n.cold.join(',')}>
            <strong>{n.name}</strong> <span className="muted small mono">reads {n.reads.join(', ')}</span> — {n.text}
          </li>
        ))}
      </ul>
    </details>
  );
}
