/**
 * Clients that ask for a large answer that is not a stream and never read it (raw sockets, paused): each is cut off
 * after server.write_timeout, what was buffered for it is released, and its request is recorded as cut off; the
 * clients beside them are all served, none lost, none run twice.
 */
import { Agent } from 'node:http';
import { markedChat, markers, postChat, StalledReader } from './faults-client';
import { EngineWatch, FaultScope, rssMb, within } from './faults-cluster';
import { classify, countRuns, type FaultRow, faultRow, type Outcome } from './faults-count';
import { CLIENT_TIMEOUT_MS, simModel } from './faults-lending';
import { bodies, sequential } from './lending-trio';
import { BENCH_CONSOLE_TOKEN, sleep } from './scope';
import type { BenchOptions } from './types';

/** Tokens of each paused client's answer: ~6 bytes each, so ~12 MB, more than a loopback connection buffers. */
const PAUSED_TOKENS = 2_000_000;

export async function pausedNonStreamed(o: BenchOptions): Promise<FaultRow> {
  const pausedN = o.quick ? 6 : 12;
  const scope = new FaultScope({ server: { write_timeout: '1s' } });
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const readers: StalledReader[] = [];
  try {
    const model = 'paused';
    const node = await scope.startNode({ paused: simModel(model, 5, { parallel: 4, loadMs: 50 }) });
    await sequential(node, agent, bodies(model, 2, [4]));
    const watch = new EngineWatch({ node });
    await watch.refresh();
    watch.start(500);
    const before = rssMb([node]);
    const next = markers('p');
    const sent = new Set<string>();
    for (let i = 0; i < pausedN; i++) {
      const m = next();
      sent.add(m);
      readers.push(new StalledReader(node.url, markedChat(model, m, PAUSED_TOKENS, false, { sim_token_time: 0 })));
    }
    await Promise.all(readers.map((r) => r.ready()));
    const stalledLogged = () => (node.output().match(/client_stalled/g) ?? []).length;
    const logged0 = stalledLogged();
    let stop = false;
    const t0 = Date.now();
    const others: Outcome[] = [];
    const traffic = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) {
          const m = next();
          sent.add(m);
          others.push(classify(await postChat(node.url, markedChat(model, m, 8), CLIENT_TIMEOUT_MS, agent)));
        }
      }),
    );
    const allCut = await within(240_000, () => stalledLogged() - logged0 >= pausedN, 100);
    const cutAfterS = (Date.now() - t0) / 1000;
    await sleep(500);
    stop = true;
    await traffic;
    o.log(`paused-non-streamed: ${stalledLogged() - logged0} paused clients cut off after ${cutAfterS.toFixed(1)} s`);
    const rssAtCut = rssMb([node]);
    const paused = await Promise.all(readers.map((r) => r.resume(5_000)));
    await watch.stop();
    const pausedOutcomes = paused.map((a) => (a.stillOpen ? null : classify(a)));
    const cut = pausedOutcomes.filter((x) => x?.kind === 'cut').length;
    const notCut = pausedOutcomes.filter((x) => x === null).length;
    // Their rows: recorded once each, as requests the client did not take (499).
    const timeline = (await (
      await fetch(`${node.url}/router/v1/console/timeline`, {
        headers: { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` },
      })
    ).json()) as { nodes: { requests: { status: number | null; outcome: string }[] }[] };
    const cutRows = timeline.nodes.flatMap((n) => n.requests).filter((r) => r.status === 499).length;
    const healthy = (await postChat(node.url, markedChat(model, 'after', 2), 10_000)).status === 200;
    const othersNotOk = others.filter((x) => x.kind !== 'ok').length;
    const outcomes: Outcome[] = [
      ...others,
      ...pausedOutcomes.filter((x): x is Outcome => x !== null && x.kind !== 'cut'),
    ];
    const row = faultRow(
      'paused-non-streamed',
      outcomes,
      countRuns(watch.seen(), sent),
      { before, after: rssMb([node]) },
      {
        note: `${pausedN} clients never read a ~12 MB answer that is not a stream; write_timeout 1 s; ${others.length} others served meanwhile`,
        paused: pausedN,
        paused_cut: cut,
        paused_not_cut: notCut,
        paused_rows_499: cutRows,
        rss_at_cut_mb: rssAtCut,
        all_cut_within_240s: allCut,
        others_sent: others.length,
        others_not_ok: othersNotOk,
        failures: notCut + othersNotOk + Math.max(0, pausedN - cutRows),
        healthy_after: healthy,
      },
    );
    row.sent += cut + notCut;
    return row;
  } finally {
    for (const r of readers) r.destroy();
    agent.destroy();
    await scope.close();
  }
}
