import type { RecordSource } from '../../src-router/contract';
import { DASH } from './format';

/**
 * ID-1: the Source column of the Models table — where a model's config came from. An older node reports none: `—`.
 * Tested in renderer-record-source.test.ts.
 */
export const SOURCE_LABEL: Record<RecordSource, string> = {
  config_file: 'config file',
  recipe: 'recipe',
  static_route: 'static route',
  remote_node: 'remote node',
};

export const sourceLabel = (source: RecordSource | undefined): string => (source ? SOURCE_LABEL[source] : DASH);
