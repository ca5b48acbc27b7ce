import { engineRows } from '../../runtime/engine-rows';
import { useAppStore } from '../../store/use-app-store';

/**
 * Engine discovery beside the self-tests: every engine family this node can or cannot run, with the binary's path,
 * version and where it was found, or why it is missing and how to get it.
 */
export function EnginesCard() {
  const engines = useAppStore((s) => s.engines);
  const rows = engineRows(engines.value?.engines ?? null);
  return (
    <div className="card" data-testid="engines-card">
      <div className="card-head">
        <h2>Engines</h2>
        <span className="muted small">the engine binaries this node can run (the Add model dialog's backends)</span>
      </div>
      {engines.failure && (
        <p className="error-text small" data-testid="engines-error">
          {engines.failure.message}
        </p>
      )}
      {!engines.value && !engines.failure && <p className="muted small">Looking for engines…</p>}
      {rows.length > 0 && (
        <ul className="engine-list">
          {rows.map((r) => (
            <li key={r.family} data-testid="engine-row" data-family={r.family} data-available={r.available}>
              <span className={`test-icon icon-${r.available ? 'pass' : 'warn'}`} aria-hidden="true">
                {r.available ? '✓' : '!'}
              </span>
              <strong>{r.family}</strong>
              {r.available ? (
                <>
                  {r.version && <span data-testid="engine-version">{r.version}</span>}
                  {r.path && (
                    <code className="small" data-testid="engine-path">
                      {r.path}
                    </code>
                  )}
                  <span className="muted small" data-testid="engine-found-in">
                    {r.where}
                  </span>
                </>
              ) : (
                <span className="muted small" data-testid="engine-reason">
                  {r.reason}
                  {r.howToGet && <> — {r.howToGet}</>}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
