import type { UpstreamRowWire } from '../../../src-router/contract';
import { DASH, type PillTone } from '../format';

/**
 * Routed upstreams (ROUTE-9), pure: per static-route model and endpoint, what real turns said. An endpoint nobody
 * called reads `untried`; one that never answered shows `never`. Tested in renderer-runtime-routing.test.ts.
 */

export interface UpstreamView {
  key: string;
  model: string;
  endpoint: string;
  engine: string;
  status: string;
  tone: PillTone;
  answered: string;
  notAnswered: string;
  lastAnswer: string;
  /** Full ISO time for a tooltip, or null. */
  lastAnswerTitle: string | null;
}

const STATUS: Record<UpstreamRowWire['status'], { label: string; tone: PillTone }> = {
  untried: { label: 'untried', tone: 'idle' },
  answering: { label: 'answering', tone: 'ok' },
  not_answering: { label: 'not answering', tone: 'bad' },
};

const pad = (n: number) => String(n).padStart(2, '0');

/** The last answer as local `YYYY-MM-DD HH:MM:SS`; `never` stays `never`; anything unreadable shows `—`. */
export function formatLastAnswer(lastAnswer: string): string {
  if (lastAnswer === 'never') return 'never';
  const t = Date.parse(lastAnswer);
  if (Number.isNaN(t)) return DASH;
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function upstreamRows(rows: readonly UpstreamRowWire[]): UpstreamView[] {
  return rows.map((r) => {
    const s = STATUS[r.status] ?? { label: r.status, tone: 'idle' as const };
    return {
      key: `${r.model}\n${r.endpoint}`,
      model: r.model,
      endpoint: r.endpoint,
      engine: r.engine ?? DASH,
      status: s.label,
      tone: s.tone,
      answered: String(r.answered),
      notAnswered: String(r.notAnswered),
      lastAnswer: formatLastAnswer(r.lastAnswer),
      lastAnswerTitle: r.lastAnswer === 'never' ? null : r.lastAnswer,
    };
  });
}

export const NO_UPSTREAMS =
  'No static routes on this node: the table lists only routing.static_routes (discovered models do not appear).';
