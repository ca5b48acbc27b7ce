import { type FormEvent, useState } from 'react';
import type { ClusterView } from '../../../../src-router/contract';
import type { ApiFailure } from '../../api/console-client';
import {
  type AddClusterErrors,
  addClusterErrors,
  type ClusterField,
  editClusterPatch,
} from '../../clusters/switcher-view';
import { useClustersStore } from '../../store/use-clusters-store';
import { TokenStorageNotice } from '../token-storage-notice';

const FIELDS: { field: ClusterField; label: string; type: string; placeholder: string }[] = [
  { field: 'name', label: 'Name', type: 'text', placeholder: 'gpu-lab' },
  { field: 'url', label: 'URL of its master', type: 'url', placeholder: 'http://10.0.0.5:8080' },
  { field: 'token', label: 'Console token', type: 'password', placeholder: 'that node’s console token' },
];

/**
 * Adds a connection profile, or changes one (`editing`): the local node calls the remote with the token before it
 * keeps it (UI-5). Editing, the token field is empty (never read back) and required again once the URL changes.
 */
export function AddClusterDialog({ onClose, editing }: { onClose(): void; editing?: ClusterView }) {
  const addCluster = useClustersStore((s) => s.addCluster);
  const updateCluster = useClustersStore((s) => s.updateCluster);
  const [draft, setDraft] = useState<Record<ClusterField, string>>({
    name: editing?.name ?? '',
    url: editing?.url ?? '',
    token: '',
  });
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [local, setLocal] = useState<AddClusterErrors | null>(null);
  const [saving, setSaving] = useState(false);
  const errors = local ?? addClusterErrors(failure);
  const urlChanged = editing !== undefined && draft.url.trim() !== (editing.url ?? '');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setLocal(null);
    if (editing) {
      const planned = editClusterPatch(editing, draft);
      if (!planned.ok) return setLocal(planned.errors);
      if (!planned.patch) return onClose();
      setSaving(true);
      const result = await updateCluster(editing.id, planned.patch);
      setSaving(false);
      if (result.ok) onClose();
      else setFailure(result.failure);
      return;
    }
    setSaving(true);
    const result = await addCluster({ name: draft.name.trim(), url: draft.url.trim(), token: draft.token });
    setSaving(false);
    if (result.ok) onClose();
    else setFailure(result.failure);
  };

  return (
    <div className="dialog-backdrop">
      <form
        className="dialog card"
        role="dialog"
        aria-modal="true"
        aria-labelledby="add-cluster-title"
        data-testid="add-cluster-dialog"
        onSubmit={(e) => void submit(e)}
      >
        <h2 id="add-cluster-title">{editing ? `Edit ${editing.name}` : 'Add a cluster'}</h2>
        <p className="muted small">
          {editing
            ? 'Leave the token empty to keep it; a new URL needs the token again.'
            : 'The node tests the connection with the token before it keeps the profile.'}
        </p>
        <TokenStorageNotice />
        {FIELDS.map(({ field, label, type, placeholder }) => (
          <label key={field} className="dialog-field">
            <span>{label}</span>
            <input
              type={type}
              value={draft[field]}
              placeholder={
                editing && field === 'token'
                  ? urlChanged
                    ? 'the token again, for the new URL'
                    : 'unchanged'
                  : placeholder
              }
              aria-required={field === 'token' && urlChanged ? true : undefined}
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
            {saving ? 'Testing the connection…' : editing ? 'Save' : 'Add'}
          </button>
        </div>
      </form>
    </div>
  );
}
