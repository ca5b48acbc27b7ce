import type { ModelRef } from './types';

/** What the request path needs from lending (QUEUE-1..5, HELPER-1..2): the router queue for enrolled models. */
export interface AdmitRequest {
  id: string;
  endpoint: 'chat' | 'completion' | 'embedding' | 'image' | 'transcription';
  stream: boolean;
  bodyBytes: number;
  json?: Record<string, unknown>;
}

export type OwnTicket =
  | { kind: 'engine'; waitedMs: number; done(): void }
  /** Served by a helper: the answer, and the helper's model names to rewrite back (LEASE-5). */
  | { kind: 'lent'; waitedMs: number; status: number; body: unknown; helper: ModelRef };

export interface BorrowedTicket {
  waitedMs: number;
  /** Aborts while the request may still be taken back (it has not claimed the runtime yet, HELPER-2). */
  takeBack: AbortSignal;
  /** The request holds the runtime now: it always finishes. */
  claimed(): void;
  done(): void;
}

export interface LendingGate {
  /** Owner or helper in any applied link: its requests go through the router queue (QUEUE-1). */
  enrolled(localId: string): boolean;
  /** A request of this node's own, for an enrolled model: waits for the engine or is lent (and answered) meanwhile. */
  admitOwn(localId: string, req: AdmitRequest, signal: AbortSignal): Promise<OwnTicket>;
  /** A borrowed request (worker call with the owner named): queued behind own work; rejects 409 offload_returned when handed back. */
  admitBorrowed(localId: string, owner: ModelRef, req: AdmitRequest, signal: AbortSignal): Promise<BorrowedTicket>;
  /**
   * Any own request arriving at this node (HELPER-1: borrowed work that has not started is handed back, and none is
   * accepted while own work waits). Call the returned function once the request holds the runtime or is over.
   */
  ownArrived(): () => void;
}
