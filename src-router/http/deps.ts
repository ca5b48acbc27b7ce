import type { Supervisor } from '../backends';
import type { ModelRegistry } from '../registry';
import type { RequestExecutor, RouterMetrics } from '../serve';

/** What the HTTP plugins are given by createNode; they hold no state of their own. */
export interface HttpDeps {
  nodeId: string;
  role: 'standalone' | 'master' | 'slave';
  version: string;
  startedAt: Date;
  executor: RequestExecutor;
  registry: ModelRegistry;
  supervisor: Supervisor;
  metrics: RouterMetrics;
  consoleToken: string;
  bodyLimit: number;
  uploadLimit: number;
  /** The built renderer (out/renderer), served at `/` when present. */
  uiDir?: string;
}
