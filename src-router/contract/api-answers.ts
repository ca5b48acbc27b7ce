import { z } from 'zod';
import { TIMELINE_MAX_LIMIT } from './timeline';

/**
 * Answers and query strings of the HTTP APIs that had no wire schema of their own, for the API document
 * (`/openapi.json`). Engine answers pass through the router with fields it never reads, so those objects are loose:
 * they name what every answer carries, not all it may carry. Shared with the renderer: zod only.
 */

/** The error body of `/v1/*` and the router's own APIs (OpenAI's shape; `code`'s extras such as `retry_after` ride along). */
export const openaiErrorBodySchema = z.object({
  error: z.looseObject({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});

/** The error body of `/api/*` (Ollama's shape). */
export const ollamaErrorBodySchema = z.object({ error: z.string() });

export const openaiModelSchema = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string().describe('node IDs serving it, `static` for a static route'),
  })
  .strict();
export const openaiModelListSchema = z.object({ object: z.literal('list'), data: z.array(openaiModelSchema) }).strict();

const usage = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
});

export const completionAnswerSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  choices: z.array(z.looseObject({ text: z.string().nullish() })),
  usage: usage.nullish(),
});
export const embeddingsAnswerSchema = z.looseObject({
  object: z.string().optional(),
  data: z.array(z.looseObject({ embedding: z.union([z.array(z.number()), z.string()]), index: z.number().int() })),
});
export const imagesAnswerSchema = z.looseObject({
  created: z.number().optional(),
  data: z.array(z.looseObject({ b64_json: z.string().optional(), url: z.string().optional() })),
});
export const transcriptionAnswerSchema = z.looseObject({ text: z.string() });
/** The form of `POST /v1/audio/transcriptions` (multipart/form-data). */
export const transcriptionFormSchema = z.looseObject({
  file: z.string().describe('the audio file (binary form part)'),
  model: z.string().min(1),
  response_format: z.enum(['json', 'text', 'srt', 'vtt', 'verbose_json']).optional(),
  language: z.string().optional(),
  prompt: z.string().optional(),
  temperature: z.string().optional(),
});

export const responsesAnswerSchema = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  status: z.string(),
  model: z.string(),
  output: z.array(z.looseObject({ type: z.string() })),
});
/** One event of a streamed Responses answer (`event:` line names its type too). */
export const responsesEventSchema = z.looseObject({ type: z.string() });

const ollamaDetails = z.looseObject({
  format: z.string(),
  family: z.string(),
  families: z.array(z.string()).nullable(),
  parameter_size: z.string(),
  quantization_level: z.string(),
});
export const ollamaVersionSchema = z.object({ version: z.string() }).strict();
export const ollamaTagsSchema = z
  .object({
    models: z.array(
      z.looseObject({
        name: z.string(),
        model: z.string(),
        modified_at: z.string(),
        size: z.number(),
        digest: z.string(),
        details: ollamaDetails,
      }),
    ),
  })
  .strict();
export const ollamaPsSchema = z
  .object({
    models: z.array(
      z.looseObject({
        name: z.string(),
        model: z.string(),
        size: z.number(),
        digest: z.string(),
        details: ollamaDetails,
        expires_at: z.string().nullable(),
        size_vram: z.number(),
        context_length: z.number(),
      }),
    ),
  })
  .strict();
export const ollamaShowSchema = z.looseObject({
  modelfile: z.string(),
  parameters: z.string().optional(),
  template: z.string().optional(),
  details: ollamaDetails,
  model_info: z.record(z.string(), z.unknown()).optional(),
  capabilities: z.array(z.string()).optional(),
  modified_at: z.string(),
});
/** An answer of `/api/chat` (`message`) or `/api/generate` (`response`); streamed, one such object per line. */
export const ollamaGenerationSchema = z.looseObject({
  model: z.string(),
  created_at: z.string(),
  done: z.boolean(),
  message: z.looseObject({ role: z.string(), content: z.string() }).optional(),
  response: z.string().optional(),
});
export const ollamaEmbedAnswerSchema = z.looseObject({ model: z.string(), embeddings: z.array(z.array(z.number())) });
export const ollamaEmbeddingAnswerSchema = z.object({ embedding: z.array(z.number()) }).strict();

/** A lane of this node and what it holds (`GET /router/v1/console/lanes`). */
export const laneStatusListSchema = z
  .object({
    lanes: z.array(
      z.looseObject({
        lane: z.string(),
        loaded: z.string().nullable(),
        state: z.string(),
        inflight: z.number(),
        queued: z.number(),
      }),
    ),
  })
  .strict();
/** An engine's last output lines, oldest first (`at`: unix ms). */
export const modelLogsSchema = z
  .object({
    localId: z.string(),
    lines: z.array(z.object({ at: z.number(), stream: z.enum(['stdout', 'stderr']), text: z.string() }).strict()),
  })
  .strict();
export const pushAppliedSchema = z.object({ applied: z.number().int(), stale: z.boolean() }).strict();
export const leasePushAnswerSchema = z
  .object({ applied: z.boolean(), reason: z.literal('not_an_owner').optional(), ignored: z.literal(true).optional() })
  .strict();
export const cancelAnswerSchema = z.object({ cancelled: z.number().int().nonnegative() }).strict();
export const scrapeAnswerSchema = z.object({ pods: z.array(z.looseObject({})) }).strict();
export const assetInventorySchema = z.looseObject({ nodeId: z.string() });
export const assetBindingsSchema = z.object({ bindings: z.array(z.looseObject({})) }).strict();
export const assetFetchAnswerSchema = z.looseObject({ sha256: z.string(), result: z.string() });
/** A stored recipe as the site API answers it (its fields, and when it was stored). */
export const recipeAnswerSchema = z.looseObject({
  name: z.string(),
  components: z.array(z.looseObject({ role: z.string(), nodeId: z.string(), model: z.string(), backend: z.string() })),
});
export const recipeListSchema = z.object({ recipes: z.array(recipeAnswerSchema) }).strict();
export const recipeLoadAnswerSchema = z.looseObject({
  ok: z.boolean(),
  components: z.array(z.looseObject({ status: z.string() })),
});
/** Any JSON object: an answer relayed from another cluster or engine as it came. */
export const anyObjectSchema = z.looseObject({});

const text = z.string().optional();

/** Rows of one decision-log page at most, and of one export. */
export const DECISION_PAGE_MAX = 1000;
export const DECISION_EXPORT_MAX = 1_000_000;

const wholeNumbers = new Map<number, RegExp>();

/**
 * A whole number from 1 to `most` (a digit then zeros: 1000, 20000) as a query string carries it, no sign and no
 * leading zero: the pattern the API document shows and the route checks.
 */
export function wholeNumberUpTo(most: number): RegExp {
  let re = wholeNumbers.get(most);
  if (re) return re;
  const s = String(most);
  if (!/^[1-9]0*$/.test(s)) throw new Error(`${most} is not a digit followed by zeros`);
  const k = s.length - 1;
  const d = Number(s[0]);
  const parts = [
    k > 0 ? `[1-9]\\d{0,${k - 1}}` : '',
    d > 1 ? `${d > 2 ? `[1-${d - 1}]` : '1'}\\d{${k}}` : '',
    s,
  ].filter(Boolean);
  wholeNumbers.set(most, (re = new RegExp(`^(?:${parts.join('|')})$`)));
  return re;
}

const upTo = (most: number) => z.string().regex(wholeNumberUpTo(most), `a whole number from 1 to ${most}`).optional();
/** Filters of the decision log: times are unix ms or ISO 8601; lists are comma-separated. */
export const decisionQuerySchema = z
  .object({
    from: text,
    to: text,
    node: text,
    model: text,
    kind: text,
    event: text,
    outcome: text,
    reason: text,
    cursor: text.describe('nextCursor of the page before'),
    limit: upTo(DECISION_PAGE_MAX).describe(`1 to ${DECISION_PAGE_MAX}`),
  })
  .strict();
export const decisionExportQuerySchema = z
  .object({
    from: text,
    to: text,
    node: text,
    model: text,
    kind: text,
    event: text,
    outcome: text,
    reason: text,
    format: z.enum(['csv', 'jsonl']).optional(),
    max: upTo(DECISION_EXPORT_MAX).describe(`rows at most, 1 to ${DECISION_EXPORT_MAX} (default 100000)`),
  })
  .strict();
export const timeRangeQuerySchema = z
  .object({
    from: text.describe('unix ms or ISO 8601 (default: 15 minutes before to)'),
    to: text.describe('unix ms or ISO 8601 (default: now)'),
    limit: upTo(TIMELINE_MAX_LIMIT).describe(`rows of each table per node, 1 to ${TIMELINE_MAX_LIMIT} (default 5000)`),
  })
  .strict();
export const replaySourceQuerySchema = z
  .object({ from: z.string().describe('unix ms or ISO 8601'), to: z.string().describe('unix ms or ISO 8601') })
  .strict();
export const nodeQuerySchema = z.object({ node: z.string().min(1).describe('a node ID') }).strict();
export const optionalNodeQuerySchema = z
  .object({ node: z.string().optional().describe('a node ID (default: this node)') })
  .strict();
export const ownerQuerySchema = z.object({ node: z.string().min(1), model: z.string().min(1) }).strict();
export const candidateQuerySchema = z
  .object({ node: z.string().min(1), model: z.string().min(1), role: z.enum(['owner', 'helper']).optional() })
  .strict();
export const borrowedAnswerQuerySchema = z
  .object({
    request: z.string().min(1).max(200),
    wait: z
      .string()
      .regex(/^\d{1,6}$/)
      .optional()
      .describe('ms to wait for it, at most 30000'),
  })
  .strict();
export const logLinesQuerySchema = z
  .object({ lines: z.string().regex(/^\d+$/).optional().describe('1 to 500 (default 100)') })
  .strict();
export const inventoryQuerySchema = z.object({ root: z.string().optional(), path: z.string().optional() }).strict();
export const bindingsQuerySchema = z
  .object({
    sha256: z.string().optional(),
    result: z.enum(['bound', 'substituted', 'rejected']).optional(),
    limit: z.string().regex(/^\d+$/).optional(),
  })
  .strict();
