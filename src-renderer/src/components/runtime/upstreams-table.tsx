import type { UpstreamRowWire } from '../../../../src-router/contract';
import type { ApiFailure } from '../../api/console-client';
import { NO_UPSTREAMS, upstreamRows } from '../../runtime/upstreams-view';

/** Routed upstreams (ROUTE-9): the static route table, judged by real turns only. */
export function UpstreamsTable({ rows, failure }: { rows: UpstreamRowWire[] | null; failure: ApiFailure | null }) {
  const views = rows ? upstreamRows(rows) : null;
  return (
    <div className="upstreams" data-testid="upstreams">
      <h3>Routed upstreams</h3>
      {failure && <p className="error-text small">{failure.message}</p>}
      {views && views.length === 0 && (
        <p className="muted small" data-testid="upstreams-empty">
          {NO_UPSTREAMS}
        </p>
      )}
      {views && views.length > 0 && (
        <table className="data-table compact" data-testid="upstreams-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Engine</th>
              <th scope="col">Answers?</th>
              <th scope="col" className="num">
                Answered
              </th>
              <th scope="col" className="num">
                Not answered
              </th>
              <th scope="col">Last answer</th>
            </tr>
          </thead>
          <tbody>
            {views.map((u) => (
              <tr key={u.key} data-testid="upstream-row" data-model={u.model}>
                <td className="nowrap">{u.model}</td>
                <td className="mono">{u.endpoint}</td>
                <td>{u.engine}</td>
                <td>
                  <span className={`pill pill-${u.tone}`} data-testid="upstream-status">
                    {u.status}
                  </span>
                </td>
                <td className="num">{u.answered}</td>
                <td className="num">{u.notAnswered}</td>
                <td className="nowrap" data-testid="upstream-last-answer" title={u.lastAnswerTitle ?? undefined}>
                  {u.lastAnswer}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
