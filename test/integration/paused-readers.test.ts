import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StalledReader } from '../../src-router/bench/faults-client';
import { eventually, startNode, type TestNode } from '../support/node-harness';

// A client that never reads a non-streamed answer cannot hold it in the node's memory: after server.write_timeout
// its socket is closed, what was buffered for it released, and its request recorded as cut off.

/** Resident memory of a process in bytes, now and at its peak (/proc/<pid>/status). */
const statusKb = (pid: number, key: string) =>
  Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const rssOf = (pid: number) => statusKb(pid, 'VmRSS');
const peakOf = (pid: number) => statusKb(pid, 'VmHWM');

describe('clients that do not read a non-streamed answer', () => {
  let node: TestNode;
  /** 60,000 embeddings: an answer of ~12 MB, more than a loopback connection's buffers hold. */
  const inputs = Array.from({ length: 60_000 }, (_, i) => `w${i}`);

  beforeAll(async () => {
    node = await startNode({
      config: { server: { write_timeout: '1s' } },
      models: {
        embed: {
          name: 'embed',
          backend: 'sim',
          capabilities: ['embedding'],
          parallel: 2,
          sim: { load_time: '10ms', token_time: '0ms' },
        },
      },
    });
  });
  afterAll(() => node?.stop());

  // The bound: four ~12 MB answers generated, relayed (the Ollama ones translated) and cut, on a loaded machine.
  it('are cut off after write_timeout (OpenAI and Ollama APIs), their answers released and recorded; others are served', {
    timeout: 180_000,
  }, async () => {
    const pid = node.proc.pid!;
    const embed = (path: string) =>
      fetch(`${node.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'embed', input: ['one', 'two'] }),
      });
    expect((await embed('/v1/embeddings')).status).toBe(200);
    const before = rssOf(pid);
    /** An embedding of 8 numbers takes less than 256 bytes of JSON. */
    const answerBytes = inputs.length * 256;
    const stalledLogged = () => (node.output().match(/client_stalled/g) ?? []).length;
    const readers = [
      ...Array.from(
        { length: 2 },
        () => new StalledReader(node.url, { model: 'embed', input: inputs }, '/v1/embeddings'),
      ),
      ...Array.from({ length: 2 }, () => new StalledReader(node.url, { model: 'embed', input: inputs }, '/api/embed')),
    ];
    try {
      await Promise.all(readers.map((r) => r.ready()));
      // The node cuts each one off once it took nothing for write_timeout (the paused sockets cannot see it yet).
      await eventually(() => stalledLogged() === readers.length, {
        what: 'every paused client cut off',
        timeoutMs: 150_000,
        everyMs: 100,
      });
      // Reading now, each finds its answer cut short and its connection closed.
      const got = await Promise.all(readers.map((r) => r.resume(10_000)));
      for (const a of got) expect(a).toMatchObject({ status: 200, ended: false, stillOpen: false });
      // What the node held for them at its peak: each answer a few times over (read, relayed or translated, written).
      expect(peakOf(pid) - before).toBeLessThan(readers.length * 8 * answerBytes);
      // Others are served meanwhile and after.
      expect((await embed('/v1/embeddings')).status).toBe(200);
      expect((await embed('/api/embed')).status).toBe(200);
      // Each is recorded once, as a request its client did not take (499, cancelled).
      const rows = await eventually(
        async () => {
          const t = await node.console<{
            nodes: { requests: { endpoint: string; status: number; outcome: string }[] }[];
          }>('/router/v1/console/timeline');
          const cut = t.nodes.flatMap((n) => n.requests).filter((r) => r.status === 499);
          return cut.length >= readers.length ? cut : undefined;
        },
        { what: 'the rows of the cut-off requests' },
      );
      expect(rows).toHaveLength(readers.length);
      expect(rows.every((r) => r.outcome === 'cancelled' && r.endpoint === 'embedding')).toBe(true);
    } finally {
      for (const r of readers) r.destroy();
    }
  });
});
