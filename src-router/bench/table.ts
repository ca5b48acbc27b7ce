/**
 * The benchmarks' output: aligned text tables, number and ratio formatting, percentiles. Pure: strings in, strings
 * out. Every benchmark prints absolute numbers and a ratio against a baseline measured in the same run
 * (DEVELOPERS: machines are noisy, compare ratios).
 */

/** What an absent or meaningless value prints as (not NaN, not Infinity). */
export const DASH = '—';

export type Align = 'left' | 'right';

export interface Column {
  /** Header text, units included (`p50 ms`, `rows/s`). */
  header: string;
  /** Default: left for the first column, right for the others (numbers). */
  align?: Align;
}

export type Cell = string | number | null | undefined;

export interface Table {
  title: string;
  columns: (Column | string)[];
  rows: Cell[][];
  /** Lines printed under the table (what the baseline is, caveats). */
  notes?: string[];
}

/** Display width: code points, so `×`, `µ` and `—` count as one column each. */
export function width(text: string): number {
  return [...text].length;
}

export function pad(text: string, to: number, align: Align): string {
  const gap = Math.max(0, to - width(text));
  return align === 'left' ? text + ' '.repeat(gap) : ' '.repeat(gap) + text;
}

/**
 * A number for a table cell: `digits` decimals below 100, one decimal below 1000, none above; thousands separated
 * with a thin comma (`12,345`). Non-finite, null and undefined print as the dash.
 */
export function formatNumber(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  const decimals = abs >= 1000 ? 0 : abs >= 100 ? Math.min(digits, 1) : digits;
  const fixed = value.toFixed(decimals);
  const [int, frac] = fixed.split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

/**
 * A ratio against the baseline, e.g. `1.00×`, `0.42×`, `12.3×`, `250×`: two decimals below 10, one below 100, none
 * above. A ratio that cannot be computed (no baseline, zero or non-finite parts) prints as the dash.
 */
export function formatRatio(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value) || value < 0) return DASH;
  const decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(decimals)}×`;
}

/** value / baseline, or null when either is missing, non-finite, or the baseline is 0. */
export function ratio(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined) return null;
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return null;
  return value / baseline;
}

/** Milliseconds for humans in prose lines: `850 ms`, `1.25 s`, `2.0 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return DASH;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples; null for no samples. */
export function percentile(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(samples: readonly number[]): number | null {
  return percentile(samples, 50);
}

/** A cell as printed: numbers through formatNumber (integers without decimals), empty cells as the dash. */
export function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return DASH;
  if (typeof cell === 'number') return formatNumber(cell, Number.isInteger(cell) ? 0 : 2);
  return cell === '' ? DASH : cell;
}

/**
 * Renders a table: the title, a header row, a rule, one line per row; every column padded to its widest cell
 * (header included), first column left-aligned, the others right-aligned unless a column says otherwise. Rows
 * shorter than the header are filled with the dash. No trailing spaces.
 */
export function renderTable(table: Table): string {
  const columns: Required<Column>[] = table.columns.map((c, i) => {
    const col = typeof c === 'string' ? { header: c } : c;
    return { header: col.header, align: col.align ?? (i === 0 ? 'left' : 'right') };
  });
  const cells = table.rows.map((row) => columns.map((_, i) => cellText(row[i])));
  const widths = columns.map((c, i) => Math.max(width(c.header), ...cells.map((r) => width(r[i]))));
  const line = (texts: string[]) =>
    texts
      .map((t, i) => pad(t, widths[i], columns[i].align))
      .join('  ')
      .replace(/\s+$/, '');
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  const out = [table.title, line(columns.map((c) => c.header)), rule, ...cells.map(line)];
  for (const note of table.notes ?? []) out.push(`  ${note}`);
  return `${out.join('\n')}\n`;
}
