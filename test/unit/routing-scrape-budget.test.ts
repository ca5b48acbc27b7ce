import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricScraper } from '../../src-router/routing';

// One host gets at most `perHostMax` scrapes per interval: the pods that answered last time first, the others in turn
// in a quarter of the budget. A loopback server plays the host: it answers running pods and 404s the others.

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function host(running: Set<string>) {
  const asked: string[][] = [[]];
  let open = 0;
  let mostOpen = 0;
  const server = createServer((req, res) => {
    const pod = (req.url ?? '').slice(1);
    asked.at(-1)!.push(pod);
    open++;
    mostOpen = Math.max(mostOpen, open);
    res.on('close', () => open--);
    if (running.has(pod)) res.writeHead(200, { 'content-type': 'text/plain' }).end('# none\n');
    else res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, asked, mostOpen: () => mostOpen, nextRound: () => asked.push([]) };
}

describe('scrapes per host and interval', () => {
  it('asks one host at most perHostMax times per interval: running pods every time, the others in turn', async () => {
    const running = new Set(['p0', 'p5', 'p9']);
    const h = await host(running);
    const scraper = new MetricScraper({ perHostMax: 4, intervalMs: 60_000 });
    scraper.setTargets(Array.from({ length: 12 }, (_, i) => ({ podId: `p${i}`, url: `${h.url}/p${i}` })));
    for (let round = 0; round < 6; round++) {
      await scraper.scrapeNow();
      h.nextRound();
    }
    const rounds = h.asked.filter((r) => r.length);
    expect(rounds).toHaveLength(6);
    for (const r of rounds) expect(r.length).toBe(4);
    expect(h.mostOpen()).toBeLessThanOrEqual(4);
    // Every pod was tried within five intervals (at least one slot of four goes to the others in turn); a running pod,
    // once found, is asked every interval.
    expect(new Set(rounds.slice(0, 5).flat())).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `p${i}`)));
    for (const r of rounds.slice(1)) expect(r).toContain('p0');
    for (const r of rounds.slice(4)) for (const p of running) expect(r).toContain(p);
    for (const p of running) expect(scraper.metricsFor(p)).toBeDefined();
  });

  it('a host with no more targets than its budget is asked for every one each interval', async () => {
    const h = await host(new Set());
    const scraper = new MetricScraper({ perHostMax: 4, intervalMs: 60_000 });
    scraper.setTargets(Array.from({ length: 4 }, (_, i) => ({ podId: `p${i}`, url: `${h.url}/p${i}` })));
    await scraper.scrapeNow();
    expect(h.asked[0].sort()).toEqual(['p0', 'p1', 'p2', 'p3']);
  });
});
