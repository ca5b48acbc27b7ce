import type { ClientGone } from '../backends/call-end';
import type { ModelRef } from './types';

/** What the request path needs from lending (QUEUE-1..5, HELPER-1..2): the router queue for enrolled models. */
export interface AdmitRequest {
  id: string;
  endpoint: 'chat' | 'completion' | 'embedding' | 'image' | 'transcription';
  stream: boolean;
  bodyBytes: number;
  json?: Record<string, unknown>;
  /** Called once if the request has to wait in the router queue: `position()` is its 1-based place, null once it no longer waits. */
  onWaiting?(position: () => number | null): void;
}

export type OwnTicket =
  | { kind: 'engine'; waitedMs: number; done(): void }
  /** Served by a helper: the answer, and the helper's model names to rewrite back (LEASE-5). */
  | {
      kind: 'lent';
      waitedMs: number;
      status: number;
      body: unknown;
      helper: ModelRef /** Its wait at the helper, when known. */;
      helperQueueMs?: number;
    };

export interface BorrowedTicket {
  waitedMs: number;
  /** Aborts while the request may still be taken back (it has not claimed the runtime yet, HELPER-2). */
  takeBack: AbortSignal;
  /**
   * The request holds the runtime now: true — it always finishes; false — it was taken back or withdrawn meanwhile
   * and must not start (give the runtime back, answer 409 offload_returned).
   */
  claimed(): boolean;
  done(): void;
}

/** An own request of this node, from arrival until it holds the runtime (HELPER-1) or is over. */
export interface OwnArrival {
  /** It holds the runtime: it no longer holds borrowed work back; a wait behind borrowed work is logged (LOG-4). */
  claimed(): void;
  /** It is over (whether or not it ever claimed the runtime). */
  done(): void;
}

export interface LendingGate {
  /** Owner or helper in any applied link: its requests go through the router queue (QUEUE-1). */
  enrolled(localId: string): boolean;
  /** A request of this node's own, for an enrolled model: waits for the engine or is lent (and answered) meanwhile. */
  admitOwn(localId: string, req: AdmitRequest, client: ClientGone): Promise<OwnTicket>;
  /** A borrowed request (worker call with the owner named): queued behind own work; rejects 409 offload_returned when handed back. */
  admitBorrowed(localId: string, owner: ModelRef, req: AdmitRequest, client: ClientGone): Promise<BorrowedTicket>;
  /**
   * Any own request arriving at this node for a local model (HELPER-1: borrowed work that has not started is handed
   * back, and none is accepted while own work waits).
   */
  ownArrived(localId: string, requestId: string, opts?: { guardian?: boolean }): OwnArrival;
  /** GUARD-3: a guardian answers on this node's runtime; what it displaces is loaded back once quiet. Returns its end. */
  guardianRun?(localId: string): () => void;
  /** A borrowed request ended with this answer (null: none), kept for an owner whose relay broke. */
  borrowedAnswered?(requestId: string, answer: { status: number; body: unknown } | null): void;
}
