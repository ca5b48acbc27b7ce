import { describe, expect, it } from 'vitest';
import { derivedServiceMs } from '../../src-router/backends/lane-runtime';
import { fitFromAnalytics, predict, serviceSampleMs } from '../../src-router/costs';
import { engineReportedMs } from '../../src-router/serve/work-measure';
import type { RequestRow } from '../../src-router/store';

// PRICE-2: a sample is the engine's time on that job alone, not the wait behind another job inside the engine.
const row = (o: Partial<RequestRow>): RequestRow => ({
  finishedAt: 10_000,
  nodeId: 'n',
  model: 'm',
  localId: 'm',
  backend: 'sim',
  endpoint: 'chat',
  streamed: false,
  tokensGenerated: 10,
  queueWaitMs: 0,
  durationMs: 0,
  outcome: 'ok',
  ...o,
});

describe('derived service time on a one-at-a-time engine', () => {
  it("is finish − max(dispatch, the previous job's finish)", () => {
    // A dispatched at 0 and B at 1 (depth 2): A runs 0–100, B waits inside the engine until 100 and runs to 200.
    expect(derivedServiceMs(0, 100, null, null)).toBe(100);
    expect(derivedServiceMs(1, 200, 100, null)).toBe(100);
    // C dispatched after B finished: its own time from dispatch.
    expect(derivedServiceMs(250, 340, 200, null)).toBe(90);
  });

  it('is unknown when a job was cancelled on the runtime since this one was dispatched (when it stopped is unknown)', () => {
    expect(derivedServiceMs(10, 200, 50, 60)).toBeNull();
    expect(derivedServiceMs(10, 200, 50, 5)).toBe(150);
  });
});

describe('samples the fits read', () => {
  it('the recorded service time, engine-reported or derived; legacy rows fall back to duration − lane wait; unknown rows are no sample', () => {
    expect(serviceSampleMs(row({ serviceMs: 80, serviceSource: 'engine', durationMs: 400 }))).toBe(80);
    expect(serviceSampleMs(row({ serviceMs: 90, serviceSource: 'derived', durationMs: 400 }))).toBe(90);
    expect(serviceSampleMs(row({ durationMs: 400, queueWaitMs: 150 }))).toBe(250);
    expect(serviceSampleMs(row({ serviceMs: null, serviceSource: 'unknown', durationMs: 400 }))).toBeNull();
  });

  it('a backlog on a depth-2 pipe: raw durations count two jobs per request, service times one', () => {
    // 10 jobs of 10 tokens at 10 ms a token, two at the engine at a time: each after the first waits 100 ms inside it.
    const rows = Array.from({ length: 10 }, (_, i) =>
      row({
        finishedAt: 1000 + 100 * i,
        durationMs: i === 0 ? 100 : 200,
        queueWaitMs: 0,
        serviceMs: 100,
        serviceSource: 'derived',
      }),
    );
    const fit = fitFromAnalytics(rows, { now: 5000, windowMs: 60_000, minSamples: 3, lane: 'text' });
    expect(predict(fit, 10)).toBe(100);
    const legacy = rows.map((r) => ({ ...r, serviceMs: null, serviceSource: null }));
    expect(predict(fitFromAnalytics(legacy, { now: 5000, windowMs: 60_000, minSamples: 3, lane: 'text' }), 10)).toBe(
      190,
    );
  });
});

describe("the engine's own report", () => {
  it('llama-server timings: prompt_ms + predicted_ms, on a body or a final chunk', () => {
    expect(engineReportedMs({ timings: { prompt_ms: 0.793, predicted_ms: 0.926 } })).toBeCloseTo(1.719);
    expect(engineReportedMs({ choices: [], timings: { predicted_ms: 40 } })).toBe(40);
    expect(engineReportedMs({ usage: {} })).toBeUndefined();
    expect(engineReportedMs({ timings: { prompt_ms: -1, predicted_ms: 'x' } })).toBeUndefined();
    expect(engineReportedMs(null)).toBeUndefined();
  });
});
