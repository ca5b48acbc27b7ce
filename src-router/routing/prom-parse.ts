import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { HistogramValue } from './metrics';

/**
 * Adapter over the Prometheus text-format parser library (parse-prometheus-text-format): one typed family list
 * with numbers as numbers, so nothing else in routing knows the library's shape.
 */

export type PromLabels = Record<string, string>;

export interface PromValueSample {
  labels: PromLabels;
  value: number;
}

export interface PromHistogramSample {
  labels: PromLabels;
  histogram: HistogramValue;
}

export interface PromSummarySample {
  labels: PromLabels;
  quantiles: { q: number; value: number }[];
  sum: number;
  count: number;
}

export type PromFamily =
  | { name: string; help: string; type: 'counter' | 'gauge' | 'untyped'; samples: PromValueSample[] }
  | { name: string; help: string; type: 'histogram'; samples: PromHistogramSample[] }
  | { name: string; help: string; type: 'summary'; samples: PromSummarySample[] };

export class PromParseError extends Error {
  readonly code = 'metrics_parse_error';
}

/** A Prometheus number: also `+Inf`, `-Inf` and `NaN`, which `Number()` does not read as written. */
export function promNumber(text: string | undefined): number {
  if (text === undefined) return NaN;
  const t = text.trim();
  if (t === '+Inf' || t === 'Inf') return Infinity;
  if (t === '-Inf') return -Infinity;
  return t === '' ? NaN : Number(t);
}

function histogramOf(
  buckets: Record<string, string> | undefined,
  sum: string | undefined,
  count: string | undefined,
): HistogramValue {
  const list = Object.entries(buckets ?? {})
    .map(([le, c]) => ({ le: promNumber(le), count: promNumber(c) }))
    .filter((b) => !Number.isNaN(b.le) && Number.isFinite(b.count))
    .sort((a, b) => a.le - b.le);
  return { buckets: list, sum: promNumber(sum), count: promNumber(count) };
}

/** Parses a Prometheus text exposition; throws PromParseError on a malformed line. */
export function parsePrometheusText(text: string): PromFamily[] {
  let raw;
  try {
    raw = parsePrometheusTextFormat(text);
  } catch (err) {
    throw new PromParseError((err as Error).message);
  }
  return raw.map((f): PromFamily => {
    const base = { name: f.name, help: f.help };
    switch (f.type) {
      case 'HISTOGRAM':
        return {
          ...base,
          type: 'histogram',
          samples: f.metrics.map((m) => ({
            labels: m.labels ?? {},
            histogram: histogramOf(m.buckets, m.sum, m.count),
          })),
        };
      case 'SUMMARY':
        return {
          ...base,
          type: 'summary',
          samples: f.metrics.map((m) => ({
            labels: m.labels ?? {},
            quantiles: Object.entries(m.quantiles ?? {})
              .map(([q, v]) => ({ q: promNumber(q), value: promNumber(v) }))
              .sort((a, b) => a.q - b.q),
            sum: promNumber(m.sum),
            count: promNumber(m.count),
          })),
        };
      default:
        return {
          ...base,
          type: f.type === 'COUNTER' ? 'counter' : f.type === 'GAUGE' ? 'gauge' : 'untyped',
          samples: f.metrics.map((m) => ({ labels: m.labels ?? {}, value: promNumber(m.value) })),
        };
    }
  });
}
