import { useEffect } from 'react';
import { benchRunViews, NO_BENCH_RUNS } from '../../runtime/bench-view';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';

/** Benchmark runs kept in this node's store (ASSET-1), newest first; each summary ratio beside the previous run's. */
export function BenchRunsCard() {
  const bench = useAppStore((s) => s.bench);
  const fetchBenchRuns = useAppStore((s) => s.fetchBenchRuns);
  useEffect(() => void fetchBenchRuns(), [fetchBenchRuns]);
  const runs = bench.runs ? benchRunViews(bench.runs) : null;

  return (
    <div className="card" data-testid="bench-runs">
      <div className="card-head">
        <h2>Benchmark runs</h2>
        <span className="spacer" />
        <button
          type="button"
          onClick={() => void fetchBenchRuns()}
          disabled={bench.loading}
          data-testid="bench-runs-refresh"
        >
          {bench.loading ? 'Reading…' : 'Re-read'}
        </button>
      </div>
      {bench.failure && (
        <Notice kind="error" testId="bench-runs-error">
          {bench.failure.message}
        </Notice>
      )}
      {runs && runs.length === 0 && (
        <p className="muted empty" data-testid="bench-runs-empty">
          {NO_BENCH_RUNS}
        </p>
      )}
      {runs?.map((run) => (
        <section key={run.id} className="bench-run" data-testid="bench-run" data-run-id={run.id}>
          <h3>
            <span title={run.startedTitle} data-testid="bench-run-started">
              {run.started}
            </span>{' '}
            <span className="tag">{run.kind}</span>{' '}
            <span className="mono" data-testid="bench-run-version">
              {run.version}
            </span>{' '}
            <span className="muted small">
              {run.benchmarks} · {run.rows} rows
            </span>
          </h3>
          <p className="muted small" data-testid="bench-run-machine">
            {run.machine}
          </p>
          {run.failed && <p className="error-text small">{run.failed}</p>}
          {run.lines.length > 0 && (
            <table className="data-table compact" data-testid="bench-run-lines">
              <thead>
                <tr>
                  <th scope="col">Benchmark</th>
                  <th scope="col">Measure</th>
                  <th scope="col" className="num">
                    Value
                  </th>
                  <th scope="col" className="num">
                    Ratio
                  </th>
                  <th scope="col" className="num">
                    Previous
                  </th>
                  <th scope="col" className="num">
                    Change
                  </th>
                  <th scope="col">Against</th>
                </tr>
              </thead>
              <tbody>
                {run.lines.map((l) => (
                  <tr key={l.key} data-testid="bench-line">
                    <td className="nowrap">{l.benchmark}</td>
                    <td>{l.measure}</td>
                    <td className="num nowrap">{l.value}</td>
                    <td className="num nowrap" data-testid="bench-line-ratio">
                      {l.ratio}
                    </td>
                    <td className="num nowrap">{l.previous}</td>
                    <td className="num nowrap" data-testid="bench-line-change">
                      {l.change}
                    </td>
                    <td className="muted small">{l.against}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
    </div>
  );
}
