import type { Supervisor } from '../backends';
import type { AssetService } from '../cluster/assets';
import type { Membership } from '../cluster/membership';
import type { ClusterDirectory } from '../cluster/profiles/cluster-directory';
import type { ReplayRunner } from '../cluster/replay-runner';
import type { TimelineQuery } from '../cluster/timeline-gather';
import type { ModelFileRoots } from '../config/model-file-roots';
import type { ActiveRequestWire, ClusterLanes, MasterSettings, NodeSnapshot, RuntimeStatus } from '../contract';
import type { TimelineNodeWire } from '../contract/timeline';
import type { GgufHeaders } from '../engines/gguf-headers';
import type { ReplaySettings } from '../lending/replay';
import type { RoutingWiring } from '../node-routing';
import type { ClusterCatalog, ModelRegistry } from '../registry';
import type { RuntimeHealth } from '../runtime';
import type { RequestExecutor, RouterMetrics } from '../serve';
import type { BenchStore, DecisionPage, DecisionQuery } from '../store';
import type { GuardOptions } from './client-guard';
import type { ConsoleCodes } from './console-codes';
import type { GuardiansHttp } from './guardian-routes';
import type { LendingHttp } from './lending-routes';
import type { ModelConfigsHost } from './model-config-routes';
import type { SlaveSync } from './settings-nudge';
import type { SettingsHost } from './settings-routes';

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
  /** One-time codes a browser exchanges for the console token (`POST /router/v1/console/session`). */
  consoleCodes: ConsoleCodes;
  /** Node-to-node calls carry it; empty or placeholder on a standalone node, so the node API admits nobody. */
  clusterToken: string;
  catalog: ClusterCatalog;
  snapshot(): NodeSnapshot;
  runtimeStatus(): RuntimeStatus;
  /** The master's view of its slaves; absent on standalone and slave nodes. */
  membership?: Membership;
  /** Console tokens of operators (`INFERENCE_ADMIN_EMAILS` when set, else console.operators); empty: the console token holder is the operator. */
  operators: readonly string[];
  routingWritesEnabled: boolean;
  /** The names of the two write gates in force (ROUTE-8: the environment variable when set, else the config key). */
  writeGate: { deployment: string; operators: string };
  /** Operators named by e-mail (`INFERENCE_ADMIN_EMAILS`), for log lines of their writes. */
  operatorEmails: readonly { email: string | null; token: string }[];
  routing: RoutingWiring;
  /** This node's runtime blob as published (RT-1). */
  runtimeHealth(): Promise<RuntimeHealth>;
  /** The lane state of every node of the cluster: this node's, then each member's through the node API. */
  clusterLanes(): Promise<ClusterLanes>;
  /** Another node's runtime blob, through its node API. */
  remoteRuntimeHealth(nodeId: string): Promise<RuntimeHealth>;
  staticRouteIds: readonly string[];
  /** routing.static_routes as configured (the console's catalog lists them, ID-1). */
  staticRoutes: Readonly<Record<string, { engine?: string; endpoints: readonly string[] }>>;
  lendingHttp: LendingHttp;
  /** ASSET-1: benchmark runs kept in this node's store. */
  benchRuns: Pick<BenchStore, 'list' | 'get'>;
  /** UI-2: every request this node runs now (cluster/active-requests). */
  activeRequests(): ActiveRequestWire[];
  /** Guardian settings: the site API and the master's pushes (GUARD-1). */
  guardians: GuardiansHttp;
  /** On a master: its links and guardian settings as slave `receiver` runs them, and its members (LEASE-1, GUARD-1). */
  masterSettings(receiver: string): MasterSettings;
  /** On a slave: its reads of those from its configured master (pushes only nudge them). */
  slaveSync?: SlaveSync;
  /** The scheduling_* and offload_* settings in force (shown on the Lending tab). */
  lendingSettings: Record<string, unknown>;
  /** This node's decision log (LOG-1). */
  decisions: { query(q: DecisionQuery): DecisionPage; flush(): void };
  /** This node's request and load analytics for a time range (the lease timeline). */
  timeline(q: TimelineQuery): TimelineNodeWire;
  /**
   * What-if replay: the settings this node runs with, its store folder (the workers read it), the runner of the
   * console's replays and the one of the rows members answer (worker threads, one job at a time each).
   */
  replay: { settings: ReplaySettings; storeDir: string; runner: ReplayRunner; sources: ReplayRunner };
  /** File roots, asset index, bindings, recipes and recipe loading of this node (ASSET-1..4). */
  assets: AssetService;
  bodyLimit: number;
  /** Host, Origin and client API key checks (server.allowed_hosts, cors_origins, api_keys). */
  guards: GuardOptions;
  /** server.write_timeout: a client that takes nothing of an answer (streamed or not) for this long is cut off. */
  writeTimeoutMs: number;
  uploadLimit: number;
  /** The Settings screen's config file and restart (null: this node was started without a host that can restart it). */
  settings: SettingsHost | null;
  /** The models folder's configs: listed, created, replaced and removed while the node runs. */
  modelConfigs: ModelConfigsHost;
  /** Where this node listens (known once it does). */
  selfUrl(): string;
  /** Remote clusters this node keeps profiles of, and their status (UI-5). */
  clusters: ClusterDirectory;
  /** The folders the Add model dialog may browse and inspect GGUF files in (models.shared_dir, config_dir, browse_dirs). */
  modelFileRoots: ModelFileRoots;
  /** Every GGUF header read of this node (inspect, Ollama's tags and show): bounded, a few at once, kept per file. */
  ggufHeaders: GgufHeaders;
  /** The built renderer (out/renderer), served at `/` when present. */
  uiDir?: string;
}
