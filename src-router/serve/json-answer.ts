import type { AnswerFacts } from '../contract/answer-facts';
import type { Target } from '../registry';
import { RouterError } from './errors';

/** An engine's JSON answer parsed, or a 502 that says it was not JSON. */
export function parseAnswer(text: string, target: Target): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new RouterError(
      502,
      'engine_bad_response',
      `'${target.clusterId}' on node '${target.nodeId}' answered with invalid JSON`,
    );
  }
}

const UNPARSED = Symbol('unparsed');

/**
 * A JSON answer sent as `text` (the engine's bytes, its model renamed in place); its parsed `body` is made
 * when first read. Callers that read every answer parsed (`ServeInput.readsBody`, borrowed requests) get a plain
 * answer, parsed at once. A class, so every answer shares one shape: a getter in an object literal gave each answer a
 * hidden class of its own, and the old space grew until mark-compacts ran (2 became 19 in the same run).
 */
export class JsonAnswer {
  readonly kind = 'json' as const;
  readonly modelId: string;
  facts?: AnswerFacts;
  servedBy?: string;
  private parsed: unknown = UNPARSED;

  constructor(
    readonly status: number,
    readonly text: string,
    private readonly target: Target,
  ) {
    this.modelId = target.clusterId;
  }

  get body(): unknown {
    if (this.parsed === UNPARSED) this.parsed = parseAnswer(this.text, this.target);
    return this.parsed;
  }
}
