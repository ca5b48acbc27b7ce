import { Fragment } from 'react';
import type { FoldedDecision } from '../../lending/decision-fold';
import { decisionLine, decisionVariables } from '../../lending/decision-view';

const COLUMNS = 10;

/** One line of the log (a folded run: count and span); expanded, every variable of its newest decision. */
export function DecisionLine({ folded, open, onToggle }: { folded: FoldedDecision; open: boolean; onToggle(): void }) {
  const l = decisionLine(folded);
  return (
    <Fragment>
      <tr
        className={`decision-line${open ? ' open' : ''}`}
        data-testid="decision-line"
        data-kind={l.kind}
        data-event={l.event}
        data-count={l.count}
        data-node={l.node}
      >
        <td>
          <button
            type="button"
            className="expander"
            aria-expanded={open}
            onClick={onToggle}
            data-testid="decision-expand"
            title={open ? 'Hide the variables' : 'Show every variable'}
          >
            {open ? '▾' : '▸'}
          </button>
        </td>
        <td className="nowrap mono" title={l.atTitle}>
          {l.at}
          {l.span && (
            <div className="id-sub" data-testid="decision-span">
              {l.span}
            </div>
          )}
        </td>
        <td className="num">
          {l.countLabel && (
            <span className="count" data-testid="decision-count">
              {l.countLabel}
            </span>
          )}
        </td>
        <td className="nowrap" title={`router ${l.version}`}>
          {l.node}
        </td>
        <td>
          <span className="tag">{l.kind}</span>
        </td>
        <td>
          <span className={`pill pill-${l.tone}`} data-testid="decision-event">
            {l.event}
          </span>
        </td>
        <td className="nowrap">
          {l.owner} <span className="muted">→</span> {l.helper}
        </td>
        <td className={`mono small${l.reason === '—' ? ' muted' : ''}`} data-testid="decision-reason">
          {l.reason}
        </td>
        <td className="num">{l.slots}</td>
        <td className="small summary">{l.summary}</td>
      </tr>
      {open && (
        <tr className="decision-vars-row">
          <td colSpan={COLUMNS}>
            {l.count > 1 && (
              <p className="muted small">
                {l.count} rows folded, {l.span}. Showing the newest:
              </p>
            )}
            <dl className="decision-vars" data-testid="decision-vars">
              {decisionVariables(folded.row).map((v) => (
                <div
                  key={v.name}
                  className={v.empty ? 'empty-var' : undefined}
                  data-testid={`decision-var-${v.name}`}
                  title={v.raw ?? undefined}
                >
                  <dt>{v.name}</dt>
                  <dd>{v.value}</dd>
                </div>
              ))}
            </dl>
          </td>
        </tr>
      )}
    </Fragment>
  );
}
