import type { ReactNode } from 'react';
import type { ConsoleModel } from '../../../src-router/contract';
import { DASH, formatCapabilities, formatContextSize, formatIdleUnload, orDash, shortHash } from '../format';
import { sourceLabel } from '../record-source';
import { StatePill } from './state-pill';

/** A row's own buttons (Edit, Remove), when the console may change this node's models. */
export type RowActions = (model: ConsoleModel) => ReactNode;

function ModelRow({ model, actions }: { model: ConsoleModel; actions?: RowActions }) {
  return (
    <tr data-testid="model-row" data-model-id={model.publicId}>
      <td>
        <div className="id-main" data-testid="model-public-id">
          {model.publicId}
        </div>
        <div className="id-sub" data-testid="model-local-id" title="local ID">
          {model.localId}
        </div>
      </td>
      <td className="nowrap" data-testid="model-backend">
        {model.backend}
      </td>
      <td className="nowrap" data-testid="model-source">
        {sourceLabel(model.source)}
      </td>
      <td data-testid="model-capabilities" title={formatCapabilities(model.capabilities)}>
        {model.capabilities.length
          ? model.capabilities.map((c) => (
              <span key={c} className="tag">
                {c}
              </span>
            ))
          : DASH}
      </td>
      <td className="nowrap" data-testid="model-lane">
        {model.lane}
      </td>
      <td>
        <StatePill state={model.state} testId="model-state" />
      </td>
      <td className="mono">
        <div className="hash" title={`config ${model.configHash}`}>
          <span className="hash-label">cfg</span>{' '}
          <span data-testid="model-config-hash">{shortHash(model.configHash)}</span>
        </div>
        <div className="hash" title={model.modelHash ? `weights ${model.modelHash}` : 'no weights hash'}>
          <span className="hash-label">wts</span>{' '}
          <span data-testid="model-weights-hash">{shortHash(model.modelHash)}</span>
        </div>
      </td>
      <td className="num" data-testid="model-context">
        {formatContextSize(model.contextsize)}
      </td>
      <td
        className="nowrap"
        data-testid="model-idle-unload"
        title="idle unload: the config's ttl, or an Ollama client's keep_alive"
      >
        {formatIdleUnload(model.idleUnloadMs, model.unloadsAt)}
      </td>
      <td className={model.lastError ? 'error-text' : 'muted'} data-testid="model-last-error">
        {orDash(model.lastError)}
      </td>
      {actions && <td className="nowrap">{actions(model)}</td>}
    </tr>
  );
}

export function ModelsTable({ models, actions }: { models: ConsoleModel[]; actions?: RowActions }) {
  return (
    <table className="data-table" data-testid="models-table">
      <caption className="visually-hidden">Models on this node</caption>
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col">Backend</th>
          <th scope="col">Source</th>
          <th scope="col">Capabilities</th>
          <th scope="col">Lane</th>
          <th scope="col">State</th>
          <th scope="col">Hashes</th>
          <th scope="col" className="num">
            Context
          </th>
          <th scope="col">Unloads</th>
          <th scope="col">Last error</th>
          {actions && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {models.map((m) => (
          <ModelRow key={`${m.nodeId}/${m.localId}`} model={m} actions={actions} />
        ))}
      </tbody>
    </table>
  );
}
