import { useState, type FormEvent } from 'react';
import type { ApiFailure } from '../../api/console-client';
import { addClusterErrors, type ClusterField } from '../../clusters/switcher-view';
import { useClustersStore } from '../../store/use-clusters-store';
import { TokenStorageNotice } from '../token-storage-notice';

const FIELDS: { field: ClusterField; label: string; type: string; placeholder: string }[] = [
  { field: 'name', label: 'Name', type: 'text', placeholder: 'gpu-lab' },
  { field: 'url', label: 'URL of its master', type: 'url', placeholder: 'http://10.0.0.5:8080' },
  { field: 'token', label: 'Console token', type: 'password', placeholder: 'that node’s console token' },
];

/** Adds a connection profile: the local node calls the remote with the token before it keeps it (UI-5). */
export function AddClusterDialog({ onClose }: { onClose(): void }) {
  const addCluster = useClustersStore((s) => s.addCluster);
  const [draft, setDraft] = useState<Record<ClusterField, string>>({ name: '', url: '', token: '' });
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [saving, setSaving] = useState(false);
  const errors = addClusterErrors(failure);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    const result = await addCluster({ name: draft.name.trim(), url: draft.url.trim(), token: draft.token });
    setSaving(false);
    if (result.ok) onClose();
    else setFailure(result.failure);
  };

  return (
    <div className="dialog-backdrop">
      <form className="dialog card" role="dialog" aria-modal="true" aria-labelledby="add-cluster-title" data-testid="add-cluster-dialog" onSubmit={(e) => void submit(e)}>
        <h2 id="add-cluster-title">Add a cluster</h2>
        <p className="muted small">The node tests the connection with the token before it keeps the profile.</p>
        <TokenStorageNotice />
        {FIELDS.map(({ field, label, type, placeholder }) => (
          <label key={field} className="dialog-field">
            <span>{label}</span>
            <input
              type={type}
              value={draft[field]}
              placeholder={placeholder}
              autoComplete="off"
              aria-invalid={errors.fields[field] ? true : undefined}
              data-testid={`add-cluster-${field}`}
              onChange={(e) => setDraft({ ...draft, [field]: e.target.value })}
            />
            {errors.fields[field] && (
              <span className="error-text small" role="alert" data-testid={`add-cluster-${field}-error`}>
                {errors.fields[field]}
              </span>
            )}
          </label>
        ))}
        {errors.form && (
          <p className="error-text small" role="alert" data-testid="add-cluster-error">
            {errors.form}
          </p>
        )}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose} data-testid="add-cluster-cancel">
            Cancel
          </button>
          <button type="submit" className="primary" disabled={saving} data-testid="add-cluster-submit">
            {saving ? 'Testing the connection…' : 'Add'}
          </button>
        </div>
      </form>
    </div>
  );
}
