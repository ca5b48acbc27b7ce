import type { SelfTestEntry } from '../../../../src-router/contract';
import { NO_SELF_TESTS, selfTestRows } from '../../runtime/runtime-view';

const ICON = { pass: '✓', warn: '!', fail: '!' } as const;

/** Boot self-tests in the order published (RT-6). Refresh re-reads them; it does not run them again. */
export function SelfTestsCard({ tests }: { tests: SelfTestEntry[] | undefined }) {
  const rows = selfTestRows(tests);
  return (
    <div className="card" data-testid="self-tests">
      <div className="card-head">
        <h2>Self-tests</h2>
        <span className="muted small">boot diagnostics, as published</span>
      </div>
      {rows.length === 0 ? (
        <p className="muted empty" data-testid="self-tests-empty">
          {NO_SELF_TESTS}
        </p>
      ) : (
        <ol className="self-tests">
          {rows.map((t) => (
            <li key={t.index} className={`self-test test-${t.tone}`} data-testid="self-test" data-status={t.status}>
              <span className={`test-icon icon-${t.tone}`} aria-hidden="true">
                {ICON[t.tone]}
              </span>
              <span className="test-name" data-testid="self-test-name">
                {t.name}
              </span>
              <span className="test-detail" data-testid="self-test-detail" title={t.detail}>
                {t.detail}
              </span>
              <span className="test-ms" data-testid="self-test-ms">
                {t.ms}
              </span>
              <span className={`test-status status-${t.tone}`} data-testid="self-test-status">
                {t.status || '—'}
              </span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
