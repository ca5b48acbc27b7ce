import { useState } from 'react';
import type { ExportFormat } from '../../api/console-client';
import { saveBlob } from '../../save-file';
import { useAppStore } from '../../store/use-app-store';

const FORMATS: { id: ExportFormat; label: string }[] = [
  { id: 'csv', label: 'CSV' },
  { id: 'jsonl', label: 'JSON Lines' },
];

/** Export (UI-6): the log with the filters applied, every node's rows, as a file (CSV or JSON Lines). */
export function ExportButton() {
  const exportDecisions = useAppStore((s) => s.exportDecisions);
  const exporting = useAppStore((s) => s.decisions.exporting);
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [error, setError] = useState<string | null>(null);

  async function run() {
    setError(null);
    const result = await exportDecisions(format);
    if (result.ok) saveBlob(result.value.blob, result.value.fileName);
    else setError(result.failure.message);
  }

  return (
    <span className="export" data-testid="decision-export">
      <select
        value={format}
        onChange={(e) => setFormat(e.target.value as ExportFormat)}
        aria-label="Export format"
        data-testid="export-format"
      >
        {FORMATS.map((f) => (
          <option key={f.id} value={f.id}>
            {f.label}
          </option>
        ))}
      </select>
      <button
        type="button"
        onClick={() => void run()}
        disabled={exporting}
        title="Download the filtered log of every node"
        data-testid="export-button"
      >
        {exporting ? 'Exporting…' : 'Export'}
      </button>
      {error && (
        <span className="error-text small" role="alert" data-testid="export-error">
          {error}
        </span>
      )}
    </span>
  );
}
