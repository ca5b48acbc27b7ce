// Types for parse-prometheus-text-format@1.1.1, which ships none. Its output follows prom2json: numbers stay strings.
declare module 'parse-prometheus-text-format' {
  interface RawSample {
    labels?: Record<string, string>;
    timestamp_ms?: string;
    /** counter, gauge, untyped */
    value?: string;
    /** histogram: upper bound (as written, e.g. "0.1", "+Inf") → cumulative count */
    buckets?: Record<string, string>;
    /** summary: quantile → value */
    quantiles?: Record<string, string>;
    /** histogram and summary */
    count?: string;
    sum?: string;
  }
  interface RawFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: RawSample[];
  }
  /** Throws `InvalidLineError` ("Encountered invalid line: …") on a malformed line. */
  function parsePrometheusTextFormat(text: string): RawFamily[];
  export default parsePrometheusTextFormat;
}
