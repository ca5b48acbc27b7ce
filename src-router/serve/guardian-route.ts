/**
 * GUARD-2 on the request path, pure: which requests carry images, which answers are an engine refusing them, and the
 * errors a client gets when no guardian can answer. The executor does the routing.
 */
import { hasImageInput } from '../contract';
import type { Endpoint } from '../engines';
import { isTextOnly } from '../guardian/rules';
import type { Target } from '../registry';
import type { GuardianReason } from '../store';
import { RouterError } from './errors';

/** A request a guardian may answer for: a chat or completion whose body carries image parts or an Ollama `images` list. */
export const carriesImage = (endpoint: Endpoint, json: Record<string, unknown> | undefined) =>
  (endpoint === 'chat' || endpoint === 'completion') && hasImageInput(json);

/** A text-only model: its image requests go to the guardian before any engine sees them. Unknown (static routes): not. */
export const needsGuardian = (target: Target) =>
  target.kind !== 'static' && !!target.capabilities && isTextOnly(target.capabilities);

/**
 * An engine that refused an image: HTTP 400 or 500 whose message says "not supported" (a real llama-server's 500). The
 * body is read only for those: a 2xx answer's parsed body is made only when read (`JsonAnswer`).
 */
export function refusedImage(answer: { status: number; body: unknown }): boolean {
  if (answer.status !== 400 && answer.status !== 500) return false;
  const err = (answer.body as { error?: { message?: unknown } | string } | null)?.error;
  const message = typeof err === 'string' ? err : err?.message;
  return typeof message === 'string' && /not supported/i.test(message);
}

const HOW_TO_SET =
  "set a guardian (a multimodal model) for it in the Lending tab's Guardians card, or with PUT /router/v1/site/guardians";

/** No guardian is set for the model: a 400 naming it and saying how to set one. */
export function noGuardian(target: Target, reason: GuardianReason, engineMessage?: string): RouterError {
  const why =
    reason === 'detected'
      ? 'is text-only and cannot read images'
      : `could not read the image (${engineMessage ?? 'its engine refused it'})`;
  return new RouterError(
    400,
    'guardian_required',
    `The model '${target.clusterId}' on node '${target.nodeId}' ${why}; no guardian answers for it: ${HOW_TO_SET}`,
    'invalid_request_error',
    'messages',
  );
}

/** A guardian is set but cannot answer now (its node is away, its config unavailable). */
export const guardianUnavailable = (target: Target, guardian: { nodeId: string; model: string }) =>
  new RouterError(
    503,
    'guardian_unavailable',
    `The model '${target.clusterId}' cannot read images and its guardian '${guardian.model}' on node '${guardian.nodeId}' is not available now`,
  );

/** The header a guardian's answer carries: who answered (`node/localId`). */
export const SERVED_BY_HEADER = 'x-routerdesk-served-by';
/** On a worker call to a guardian's node: the text-only model it answers for (never routed to a guardian again there). */
export const GUARDIAN_FOR_HEADER = 'x-routerdesk-guardian-for';
