import { NO_ACTIVE, NO_HELD, NOT_ENROLLED, type NodeCardView } from '../../nodes/nodes-view';
import { ActiveTable } from './active-table';
import { RequestTable } from './request-table';

/** One node (UI-2): health, build, settings sync, then its active and held requests. */
export function NodeCard({ node }: { node: NodeCardView }) {
  const facts: [string, string, string, string?][] = [
    ['Address', node.url, 'node-url'],
    ['Build', node.build, 'node-build'],
    ['Settings', node.settingsHash, 'node-settings-hash', node.settingsHashTitle],
    ['Last seen', node.lastSeen, 'node-last-seen'],
    ['Models', node.models, 'node-models'],
  ];
  return (
    <div className="card node-card" data-testid="node-card" data-node-id={node.nodeId}>
      <div className="card-head">
        <h2 className="node-title" data-testid="node-card-id">
          {node.nodeId}
        </h2>
        <span className="tag">{node.role}</span>
        <span className={`pill pill-${node.health.tone}`} data-testid="node-health">
          {node.health.label}
        </span>
        <span
          className={`pill pill-${node.settings.tone}`}
          data-testid="node-settings"
          title="whether the node runs the master's lending settings"
        >
          {node.settings.label}
        </span>
      </div>
      <dl className="fact-row">
        {facts.map(([label, value, testId, title]) => (
          <div key={testId} title={title}>
            <dt>{label}</dt>
            <dd data-testid={testId}>{value}</dd>
          </div>
        ))}
      </dl>
      {node.lastError && (
        <p className="error-text small" data-testid="node-last-error">
          {node.lastError}
        </p>
      )}
      {node.warnings.map((w) => (
        <p key={w} className="error-text small" data-testid="node-warning">
          {w}
        </p>
      ))}
      {node.heldNote && <p className="muted small">{node.heldNote}</p>}
      {!node.heldNote && (
        <div className="request-split">
          <section data-testid="node-active">
            <h3>
              Active requests <span className="count">{node.active.length}</span>
            </h3>
            {node.activeNote && (
              <p className="muted small" data-testid="node-active-note">
                {node.activeNote}
              </p>
            )}
            {node.active.length ? <ActiveTable rows={node.active} /> : <p className="muted small">{NO_ACTIVE}</p>}
          </section>
          <section data-testid="node-held">
            <h3>
              Held requests <span className="count">{node.held.length}</span>
              {node.heldSummary && <span className="muted small"> {node.heldSummary}</span>}
            </h3>
            {node.enrolled.length === 0 ? (
              <p className="muted small" data-testid="node-not-enrolled">
                {NOT_ENROLLED}
              </p>
            ) : (
              <>
                {node.held.length ? (
                  <RequestTable rows={node.held} testId="held-requests" />
                ) : (
                  <p className="muted small">{NO_HELD}</p>
                )}
                <p className="muted small">Enrolled: {node.enrolled.join(', ')}</p>
              </>
            )}
          </section>
        </div>
      )}
    </div>
  );
}
