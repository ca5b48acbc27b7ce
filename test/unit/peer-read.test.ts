import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  chatRequestSchema,
  heldNodeSchema,
  lendingNodeStateSchema,
  nodeSnapshotSchema,
  peerRead,
  relayAnswerSchema,
  withdrawAnswerSchema,
} from '../../src-router/contract';

// Peers of different builds interoperate: a newer peer's view with a field this build does not know parses, the
// unknown field stripped, every known field still checked. What this node sends stays strict.

const heldView = (item: Record<string, unknown>) => ({
  nodeId: 'gpu-a',
  models: [
    {
      model: 'chat-7b',
      depth: 2,
      active: [],
      held: [
        {
          id: 'r1',
          state: 'queued',
          firstArrival: '2025-01-01T00:00:00.000Z',
          borrowed: false,
          returned: false,
          stream: true,
          position: 1,
          ...item,
        },
      ],
    },
  ],
});

describe('peerRead', () => {
  it('a held-requests view with an extra field from a newer peer parses, stripped of it; the strict schema refuses it', () => {
    const newer = heldView({ predictedWaitMs: 1200 });
    expect(heldNodeSchema.safeParse(newer).success).toBe(false);
    const read = peerRead(heldNodeSchema).parse({ ...newer, builtAt: 'tomorrow' });
    expect(read).toEqual(heldView({}));
    expect(read.models[0].held[0]).not.toHaveProperty('predictedWaitMs');
  });

  it('known fields are still validated, at any depth', () => {
    expect(peerRead(heldNodeSchema).safeParse(heldView({ state: 'teleported' })).success).toBe(false);
    expect(peerRead(heldNodeSchema).safeParse(heldView({ position: 0 })).success).toBe(false);
    expect(peerRead(heldNodeSchema).safeParse({ nodeId: 'gpu-a' }).success).toBe(false);
  });

  it('through unions, nullables and records: a lending state and a relay answer with new fields', () => {
    const model = {
      model: 'a',
      lane: 'text',
      loaded: true,
      held: 0,
      heldWork: [],
      active: 0,
      lentOut: 0,
      fit: { kind: 'constant', work: 8, meanMs: 800, samples: 5, spread: 0.1 },
      loadMs: null,
      contextsize: 4096,
      eligible: true,
      multimodal: false,
      meanHeldTokens: null,
      warmth: 'hot',
    };
    const state = {
      nodeId: 'gpu-a',
      reachable: true,
      acceptsBorrowed: true,
      ownIdleMs: 0,
      sinceOwnRequestMs: null,
      lanes: { text: 'a' },
      borrowedInFlight: 0,
      models: [model],
      gpuTemp: 61,
    };
    expect(lendingNodeStateSchema.safeParse(state).success).toBe(false);
    const read = peerRead(lendingNodeStateSchema).parse(state);
    expect(read.models[0].fit).toEqual({ kind: 'constant', work: 8, meanMs: 800, samples: 5 });
    expect(read.models[0]).not.toHaveProperty('warmth');
    expect(read).not.toHaveProperty('gpuTemp');
    expect(peerRead(relayAnswerSchema).parse({ kind: 'returned', reason: 'own_work_arrived', at: 5 })).toEqual({
      kind: 'returned',
      reason: 'own_work_arrived',
    });
    expect(peerRead(withdrawAnswerSchema).safeParse({ results: { r1: 'maybe' } }).success).toBe(false);
  });

  it('a snapshot from a newer slave parses, its records stripped of what this build does not know', () => {
    const record = {
      publicId: 'chat-7b',
      localId: 'chat-7b',
      backend: 'sim',
      capabilities: ['text'],
      lane: 'text',
      configHash: 'c1',
      modelHash: null,
      contextsize: 4096,
      parallel: 1,
      engine: null,
      available: true,
      source: 'config_file',
    };
    const snapshot = {
      nodeId: 'gpu-a',
      role: 'slave',
      publicUrl: null,
      version: '9.9.9',
      settingsHash: 'h',
      startedAt: '2025-01-01T00:00:00.000Z',
      runtimeStatus: true,
      models: [record],
    };
    const newer = { ...snapshot, region: 'eu', models: [{ ...record, quantization: 'q4' }] };
    expect(nodeSnapshotSchema.safeParse(newer).success).toBe(false);
    expect(peerRead(nodeSnapshotSchema).parse(newer)).toEqual(snapshot);
    expect(peerRead(nodeSnapshotSchema)).toBe(peerRead(nodeSnapshotSchema));
  });

  it('what a client request body carries is kept (loose stays loose)', () => {
    const relayed = peerRead(z.object({ json: chatRequestSchema }).strict()).parse({
      json: { model: 'm', messages: [{ role: 'user', content: 'hi', extra: 1 }], seed: 3 },
      later: true,
    });
    expect(relayed).toEqual({ json: { model: 'm', messages: [{ role: 'user', content: 'hi', extra: 1 }], seed: 3 } });
  });

  it('the contract schemas themselves stay strict', () => {
    peerRead(heldNodeSchema);
    expect(heldNodeSchema.safeParse(heldView({ predictedWaitMs: 1 })).success).toBe(false);
  });
});
