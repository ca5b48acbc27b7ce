import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { gatherReplay } from '../../src-router/cluster/replay-gather';
import { parseNodeConfig } from '../../src-router/config';
import { replaySettingsOf } from '../../src-router/lending/replay';
import type { ReplaySource } from '../../src-router/store';

// The console replay's gathering: a member that answers something that is not its rows, or nothing, is named in
// `missing` and the replay runs without it; a bad setting is the 400 naming `settings.KEY` before anything is read.

const empty = (nodeId: string): ReplaySource => ({
  nodeId,
  requests: [],
  history: [],
  loads: [],
  decisions: [],
  links: [],
  truncated: false,
});
const log = { warn: () => undefined } as never;

describe('gatherReplay', () => {
  it('names members that fail and replays the rest', async () => {
    const server = createServer((_req, res) => res.end(JSON.stringify({ nodeId: 'bad', requests: 'no' })));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const asked: string[] = [];
      const r = await gatherReplay(
        {
          clusterToken: 't',
          log,
          settings: replaySettingsOf(parseNodeConfig({}).cluster),
          timeoutMs: 2000,
          own: (q) => (asked.push(`${q.from}-${q.to}`), empty('master')),
          members: () => [
            { nodeId: 'wrong-shape', url: `http://127.0.0.1:${port}` },
            { nodeId: 'closed', url: 'http://127.0.0.1:1' },
          ],
        },
        { from: 1000, to: 2000, settings: { offload_probe_idle: '30s' }, maxEvents: 1000 },
      );
      expect(asked).toEqual(['1000-2000']);
      expect(r.missing).toEqual(['closed', 'wrong-shape']);
      expect(r.settings.offload_probe_idle).toBe(30_000);
      expect(r.recorded.requests).toBe(0);
    } finally {
      server.close();
    }
  });

  it("reads at most maxBytes of a member's answer: an endless body is cut off and the member named missing", async () => {
    const warnings: string[] = [];
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"nodeId":"endless","requests":[');
      const more = () => res.write('{"x":1},'.repeat(100), () => !res.destroyed && setImmediate(more));
      more();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await gatherReplay(
        {
          clusterToken: 't',
          log: { warn: (_o: unknown, m: string) => warnings.push(m) } as never,
          settings: replaySettingsOf(parseNodeConfig({}).cluster),
          maxBytes: 10_000,
          own: () => empty('master'),
          members: () => [{ nodeId: 'endless', url: `http://127.0.0.1:${port}` }],
        },
        { from: 0, to: 1, settings: {}, maxEvents: 10 },
      );
      expect(r.missing).toEqual(['endless']);
      expect(warnings.join('\n')).toMatch(/over 10000 bytes/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('a bad setting is refused before any rows are read', async () => {
    let read = false;
    await expect(
      gatherReplay(
        {
          clusterToken: 't',
          log,
          settings: replaySettingsOf(parseNodeConfig({}).cluster),
          own: () => ((read = true), empty('m')),
          members: () => [],
        },
        { from: 0, to: 1, settings: { scheduling_backend_depth: 'x' }, maxEvents: 10 },
      ),
    ).rejects.toMatchObject({ status: 400, param: 'settings.scheduling_backend_depth' });
    expect(read).toBe(false);
  });
});
