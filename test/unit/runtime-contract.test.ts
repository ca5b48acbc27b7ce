import { describe, expect, it } from 'vitest';
import {
  type RoutingViewWire,
  routingViewSchema,
  runtimeBlobSchema,
  setRoutingAnswerSchema,
  type UpstreamRowWire,
  upstreamsAnswerSchema,
} from '../../src-router/contract';
import { EmbeddedKeySpace } from '../../src-router/kv';
import {
  emptyUpstreamBook,
  LiveRoutingModule,
  type LiveRoutingStatus,
  type RoutingView,
  recordTurn,
  type UpstreamRow,
  upstreamsSnapshot,
  WRITE_GATE,
} from '../../src-router/routing';
import * as blobModule from '../../src-router/runtime/blob';

// The console contract of the Routing card (contract/runtime.ts) against what routing/ really builds: the renderer
// parses these answers strictly, so a field added on one side only fails here first.

// Type level: the server's shapes are assignable to the wire types and back.
type ServerRouting = RoutingView & { gate: typeof WRITE_GATE; status: LiveRoutingStatus };
const toWire = (v: ServerRouting): RoutingViewWire => v;
const fromWire = (v: RoutingViewWire): Omit<RoutingView, 'strategies' | 'profiles'> => v;
const rowToWire = (r: UpstreamRow): UpstreamRowWire => r;
void [toWire, fromWire, rowToWire];

describe('console contract: runtime.routing, runtime.setRouting, runtime.upstreams', () => {
  it('a live module’s view, with the gates and its status as runtime-routes answers, parses strictly', async () => {
    const keyspace = new EmbeddedKeySpace();
    const mod = new LiveRoutingModule({ keyspace, pollMs: 60_000 });
    try {
      await mod.pollNow();
      for (const access of [
        { writable: true, canWrite: true },
        { writable: false, canWrite: false },
      ]) {
        const answer = { ...(await mod.routingView(access)), gate: WRITE_GATE, status: mod.status() };
        expect(routingViewSchema.parse(answer)).toEqual(answer);
      }
      const set = await mod.setRouting({ strategy: 'least-request', routesEngine: 'clutch-layers' });
      expect(set.ok).toBe(true);
      if (set.ok) expect(setRoutingAnswerSchema.parse({ desired: set.desired })).toEqual({ desired: set.desired });
      await mod.pollNow();
      const answer = {
        ...(await mod.routingView({ writable: true, canWrite: true })),
        gate: WRITE_GATE,
        status: mod.status(),
      };
      const parsed = routingViewSchema.parse(answer);
      expect(parsed.desired).toEqual({ strategy: 'least-request', routes_engine: 'clutch-layers' });
      expect(parsed.status.desired).toEqual({ strategy: 'least-request', routes_engine: 'clutch-layers' });
    } finally {
      mod.stop();
      await keyspace.close();
    }
  });

  it('upstream rows parse strictly in every state', () => {
    let book = emptyUpstreamBook();
    book = recordTurn(book, 'm', 'http://a/v1', true, Date.UTC(2025, 0, 1));
    book = recordTurn(book, 'm', 'http://b/v1', false, Date.UTC(2025, 0, 1));
    const rows = upstreamsSnapshot(
      {
        m: { endpoints: ['http://a/v1', 'http://b/v1', 'http://c/v1'], engine: 'clutch-layers' },
        n: { endpoints: ['http://d/v1'] },
      },
      book,
    );
    expect(rows.map((r) => r.status)).toEqual(['answering', 'not_answering', 'untried', 'untried']);
    expect(upstreamsAnswerSchema.parse({ upstreams: rows })).toEqual({ upstreams: rows });
  });

  it('runtime/blob.ts re-exports the contract’s blob schema (one definition)', () => {
    expect(blobModule.runtimeBlobSchema).toBe(runtimeBlobSchema);
    expect(blobModule.RUNTIME_BLOB_KEY).toBe('clutchcall:inference:runtime');
  });
});
