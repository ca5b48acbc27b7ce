import type { ConsoleNode } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

/**
 * `connecting` until the first answer; `online` after a good one; otherwise the kind of the last failure: `no-token`
 * when the page had no token to send, `rejected` when the node refused the one it sent.
 */
export type ConnectionStatus = 'connecting' | 'online' | 'no-token' | 'rejected' | 'offline';

export interface ConnectionState {
  url: string;
  /** The node as it last described itself; kept through transient failures, dropped when the token is rejected. */
  node: ConsoleNode | null;
  status: ConnectionStatus;
  failure: ApiFailure | null;
  lastOkAt: number | null;
}

export interface ConnectionSlice {
  connection: ConnectionState;
  connectionSucceeded(node: ConsoleNode): void;
  connectionFailed(failure: ApiFailure): void;
}

const statusOf = (failure: ApiFailure): ConnectionStatus =>
  failure.kind === 'no-token' ? 'no-token' : failure.kind === 'rejected' ? 'rejected' : 'offline';

export const createConnectionSlice =
  (url: string): SliceCreator<ConnectionSlice> =>
  (deps) =>
  (set) => ({
    connection: { url, node: null, status: 'connecting', failure: null, lastOkAt: null },
    connectionSucceeded: (node) =>
      set((s) => ({ connection: { ...s.connection, node, status: 'online', failure: null, lastOkAt: deps.now() } })),
    connectionFailed: (failure) =>
      set((s) => {
        const status = statusOf(failure);
        return {
          connection: {
            ...s.connection,
            node: status === 'rejected' || status === 'no-token' ? null : s.connection.node,
            status,
            failure,
          },
        };
      }),
  });
