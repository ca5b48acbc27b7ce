/** Exporting the decision log to a file (UI-6): CSV (RFC 4180) and JSON lines. Pure. */
import { DECISION_COLUMNS, DECISION_FIELDS, type DecisionRow } from './decision-log-row';

const CRLF = '\r\n';

/** One CSV field: quoted when it holds a comma, a double quote, CR or LF; inner quotes doubled. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function cell(row: DecisionRow, f: (typeof DECISION_FIELDS)[number]): string {
  const v = row[f];
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The CSV header line (every column, by its table name), CRLF-terminated. */
export const csvHeader = (): string => DECISION_FIELDS.map((f) => DECISION_COLUMNS[f]).join(',') + CRLF;

/** One CSV line per row, each CRLF-terminated; null is an empty field; details is JSON. */
export function csvLines(rows: readonly DecisionRow[]): string {
  let out = '';
  for (const row of rows) out += DECISION_FIELDS.map((f) => csvField(cell(row, f))).join(',') + CRLF;
  return out;
}

/** Header line + one line per row (RFC 4180). */
export const toCsv = (rows: readonly DecisionRow[]): string => csvHeader() + csvLines(rows);

/** One JSON object per line (camelCase fields, every column present), each line ending in LF. */
export function toJsonLines(rows: readonly DecisionRow[]): string {
  let out = '';
  for (const row of rows) {
    const o: Record<string, unknown> = {};
    for (const f of DECISION_FIELDS) o[f] = row[f] ?? null;
    out += JSON.stringify(o) + '\n';
  }
  return out;
}

/** Reads what toJsonLines wrote (blank lines ignored). Throws on a line that is not a JSON object. */
export function parseJsonLines(text: string): DecisionRow[] {
  const rows: DecisionRow[] = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (!line.trim()) continue;
    const v: unknown = JSON.parse(line);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`line ${i + 1} is not a JSON object`);
    const o = v as Record<string, unknown>;
    const row: Record<string, unknown> = {};
    for (const f of DECISION_FIELDS) row[f] = o[f] ?? null;
    rows.push(row as unknown as DecisionRow);
  }
  return rows;
}

/** File name for an export, e.g. `offload-decisions-20250101-120000.csv` (UTC). */
export function exportFileName(format: 'csv' | 'jsonl', now: number): string {
  const t = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `offload-decisions-${t}.${format}`;
}
