import type { ModelFileInspection, ModelFileList } from '../../../src-router/contract';
import type { ApiFailure, ApiResult } from '../api/console-client';
import type { EngineList, ModelConfigList, ModelConfigRemoved, ModelConfigWritten } from '../api/model-config-wire';
import type { SliceCreator } from './types';

export interface ReadState<T> {
  value: T | null;
  loading: boolean;
  failure: ApiFailure | null;
}

export interface ModelConfigsSlice {
  /** The node's models folder as last read (the Add model dialog, Edit and Remove). */
  modelConfigs: ReadState<ModelConfigList>;
  /** Engine discovery as last read (the dialog's backends, the Runtime screen). */
  engines: ReadState<EngineList>;
  fetchModelConfigs(): Promise<void>;
  fetchEngines(): Promise<void>;
  /** Writes return the node's answer as is (a 400 names the field); the models are read again after a write. */
  createModelConfig(config: Record<string, unknown>): Promise<ApiResult<ModelConfigWritten>>;
  replaceModelConfig(name: string, config: Record<string, unknown>): Promise<ApiResult<ModelConfigWritten>>;
  deleteModelConfig(name: string): Promise<ApiResult<ModelConfigRemoved>>;
  /** The dialog's file browser and header read: passed through, nothing kept. */
  listModelFiles(dir?: string): Promise<ApiResult<ModelFileList>>;
  inspectModelFile(path: string): Promise<ApiResult<ModelFileInspection>>;
}

const empty = <T>(): ReadState<T> => ({ value: null, loading: false, failure: null });

export const createModelConfigsSlice: SliceCreator<ModelConfigsSlice> = (deps) => (set, get) => {
  async function read<K extends 'modelConfigs' | 'engines'>(
    key: K,
    call: () => Promise<ApiResult<NonNullable<ModelConfigsSlice[K]['value']>>>,
  ): Promise<void> {
    set((s) => ({ [key]: { ...s[key], loading: true } }) as Partial<ModelConfigsSlice>);
    const result = await call();
    set(
      (s) =>
        ({
          [key]: result.ok
            ? { value: result.value, loading: false, failure: null }
            : { value: s[key].value, loading: false, failure: result.failure },
        }) as Partial<ModelConfigsSlice>,
    );
  }

  /** After a write: the folder, and the models the node now serves (the change is taken in without a restart). */
  async function after<T>(result: ApiResult<T>): Promise<ApiResult<T>> {
    if (result.ok) await get().refreshModels();
    return result;
  }

  return {
    modelConfigs: empty(),
    engines: empty(),
    fetchModelConfigs: () => read('modelConfigs', () => deps.client.modelConfigs()),
    fetchEngines: () => read('engines', () => deps.client.engines()),
    createModelConfig: async (config) => after(await deps.client.createModelConfig(config)),
    replaceModelConfig: async (name, config) => after(await deps.client.replaceModelConfig(name, config)),
    deleteModelConfig: async (name) => after(await deps.client.deleteModelConfig(name)),
    listModelFiles: (dir) => deps.client.modelFiles(dir),
    inspectModelFile: (path) => deps.client.inspectModelFile(path),
  };
};
