import type { ReactNode } from 'react';
import { type FieldValue, fieldFacts, fieldPlaceholder, type SettingsField } from '../../settings/settings-form';

/** The element id of a field's input (its label points at it). */
export const inputId = (path: string) => `settings-${path.replace(/\./g, '-')}`;

export function FieldMessage({
  message,
  testId,
  kind,
}: {
  message: string | null | undefined;
  testId: string;
  kind: 'error' | 'hint';
}) {
  if (!message) return null;
  return (
    <span
      className={`field-message small ${kind === 'error' ? 'error-text' : 'requires-warn'}`}
      role={kind === 'error' ? 'alert' : 'status'}
      data-testid={testId}
    >
      {message}
    </span>
  );
}

/**
 * One field of the Settings form: its label, input (by kind), what it means (the JSON Schema's description, else the
 * form's own line), the hint before sending and the node's 400 when it named this field.
 */
export function SettingsFieldRow(props: {
  field: SettingsField;
  schema: Record<string, unknown>;
  value: FieldValue;
  disabled: boolean;
  error: string | null;
  hint?: string;
  onChange(value: FieldValue): void;
  /** The role's options. */
  options?: string[];
  /** Beside the input (the token's Generate). */
  extra?: ReactNode;
}) {
  const { field, value, disabled } = props;
  const id = inputId(field.path);
  const testId = `settings-field-${field.path}`;
  const invalid = props.error ? true : undefined;
  const help = fieldFacts(props.schema, field.path).description ?? field.help;
  let input: ReactNode;
  if (field.kind === 'boolean') {
    input = (
      <input
        id={id}
        type="checkbox"
        checked={value === true}
        disabled={disabled}
        onChange={(e) => props.onChange(e.target.checked)}
        data-testid={testId}
        aria-invalid={invalid}
      />
    );
  } else if (field.kind === 'role') {
    input = (
      <select
        id={id}
        value={String(value)}
        disabled={disabled}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={testId}
        aria-invalid={invalid}
      >
        {(props.options ?? []).map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'lines') {
    input = (
      <textarea
        id={id}
        className="spec-input mono"
        rows={Math.max(2, String(value).split('\n').length)}
        spellCheck={false}
        value={String(value)}
        placeholder="/srv/models"
        disabled={disabled}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={testId}
        aria-invalid={invalid}
        aria-describedby={`${id}-help`}
      />
    );
  } else {
    input = (
      <input
        id={id}
        className={`spec-input${field.kind === 'secret' ? ' mono' : ''}`}
        type="text"
        spellCheck={false}
        autoComplete="off"
        inputMode={field.kind === 'integer' ? 'numeric' : undefined}
        value={String(value)}
        placeholder={fieldPlaceholder(props.schema, field)}
        disabled={disabled}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={testId}
        aria-invalid={invalid}
        aria-describedby={`${id}-help`}
      />
    );
  }
  return (
    <div className="settings-field" data-path={field.path}>
      <div className="control-row">
        <label className="control-label" htmlFor={id}>
          {field.label}
        </label>
        {input}
        {props.extra}
      </div>
      <div className="settings-notes">
        {help && (
          <span id={`${id}-help`} className="muted small">
            {help}
          </span>
        )}
        <FieldMessage message={props.hint} testId={`settings-hint-${field.path}`} kind="hint" />
        <FieldMessage message={props.error} testId={`settings-error-${field.path}`} kind="error" />
      </div>
    </div>
  );
}
