/** Counters of the llama-node engine and their Prometheus text exposition. */

export type EngineEndpoint = 'chat' | 'completion' | 'embedding';
const ENDPOINTS: readonly EngineEndpoint[] = ['chat', 'completion', 'embedding'];

export const METRIC_NAMES = {
  requests: 'llama_node_requests_total',
  active: 'llama_node_requests_active',
  errors: 'llama_node_request_errors_total',
  cancelled: 'llama_node_cancelled_total',
  promptTokens: 'llama_node_prompt_tokens_total',
  generatedTokens: 'llama_node_tokens_generated_total',
  ready: 'llama_node_model_loaded',
  activeSlots: 'clutch_active_slots',
  queueDepth: 'clutch_queue_depth',
  totalSlots: 'clutch_slots_total',
} as const;

export interface SlotGauges {
  active: number;
  queued: number;
  total: number;
}

export class EngineMetrics {
  readonly requests: Record<EngineEndpoint, number> = { chat: 0, completion: 0, embedding: 0 };
  errors = 0;
  active = 0;
  cancelled = 0;
  promptTokens = 0;
  generatedTokens = 0;

  /** Counts a request in and returns the function that counts it out. */
  begin(endpoint: EngineEndpoint): () => void {
    this.requests[endpoint]++;
    this.active++;
    let done = false;
    return () => {
      if (!done) this.active--;
      done = true;
    };
  }

  render(slots: SlotGauges, ready: boolean): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    const n = METRIC_NAMES;
    metric(
      n.requests,
      'counter',
      'Requests received, by endpoint.',
      ENDPOINTS.map((e) => [`{endpoint="${e}"}`, this.requests[e]]),
    );
    metric(n.active, 'gauge', 'Requests in progress (queued or generating).', [['', this.active]]);
    metric(n.errors, 'counter', 'Requests that ended in an error response.', [['', this.errors]]);
    metric(n.cancelled, 'counter', 'Requests cancelled by a client disconnect.', [['', this.cancelled]]);
    metric(n.promptTokens, 'counter', 'Prompt tokens processed.', [['', this.promptTokens]]);
    metric(n.generatedTokens, 'counter', 'Tokens generated.', [['', this.generatedTokens]]);
    metric(n.ready, 'gauge', '1 when the model is loaded and serving.', [['', ready ? 1 : 0]]);
    metric(n.activeSlots, 'gauge', 'Sequences generating now.', [['', slots.active]]);
    metric(n.queueDepth, 'gauge', 'Requests waiting for a sequence.', [['', slots.queued]]);
    metric(n.totalSlots, 'gauge', 'Sequences (parallel slots) of the engine.', [['', slots.total]]);
    return lines.join('\n') + '\n';
  }
}
