/**
 * Routed upstreams (ROUTE-9): per static-route model and endpoint, what real turns said — answered or not, and
 * when it last answered. No probes: an endpoint nobody has called is `untried`; one that never answered shows
 * `never` as its last answer. Pure: `recordTurn` returns a new book; `upstreamsSnapshot` reads one.
 */

export interface StaticRouteTable {
  [model: string]: { endpoints: readonly string[]; engine?: string };
}

export interface UpstreamTally {
  answered: number;
  notAnswered: number;
  lastAnswerAt: number | null;
  /** Whether the latest turn was answered. */
  lastTurnAnswered: boolean;
}

export type UpstreamBook = ReadonlyMap<string, UpstreamTally>;

export const emptyUpstreamBook = (): UpstreamBook => new Map();

const keyOf = (model: string, endpoint: string) => `${model}\n${endpoint}`;

/**
 * Records one real turn. `answered` is the caller's verdict: an HTTP answer the engine produced (not a
 * connection error, timeout or 5xx from an unreachable upstream).
 */
export function recordTurn(
  book: UpstreamBook,
  model: string,
  endpoint: string,
  answered: boolean,
  at: number,
): UpstreamBook {
  const key = keyOf(model, endpoint);
  const old = book.get(key) ?? { answered: 0, notAnswered: 0, lastAnswerAt: null, lastTurnAnswered: false };
  const next = new Map(book);
  next.set(key, {
    answered: old.answered + (answered ? 1 : 0),
    notAnswered: old.notAnswered + (answered ? 0 : 1),
    lastAnswerAt: answered ? at : old.lastAnswerAt,
    lastTurnAnswered: answered,
  });
  return next;
}

export type UpstreamStatus = 'untried' | 'answering' | 'not_answering';

export interface UpstreamRow {
  model: string;
  endpoint: string;
  engine: string | null;
  status: UpstreamStatus;
  answered: number;
  notAnswered: number;
  lastAnswerAt: number | null;
  /** ISO time of the last answer, or `never`. */
  lastAnswer: string;
}

/** One row per model and endpoint of the static route table, in table order (turns for other endpoints are ignored). */
export function upstreamsSnapshot(routes: StaticRouteTable, book: UpstreamBook): UpstreamRow[] {
  return Object.entries(routes).flatMap(([model, route]) =>
    route.endpoints.map((endpoint): UpstreamRow => {
      const t = book.get(keyOf(model, endpoint));
      const status: UpstreamStatus = !t ? 'untried' : t.lastTurnAnswered ? 'answering' : 'not_answering';
      return {
        model,
        endpoint,
        engine: route.engine ?? null,
        status,
        answered: t?.answered ?? 0,
        notAnswered: t?.notAnswered ?? 0,
        lastAnswerAt: t?.lastAnswerAt ?? null,
        lastAnswer: t?.lastAnswerAt != null ? new Date(t.lastAnswerAt).toISOString() : 'never',
      };
    }),
  );
}
