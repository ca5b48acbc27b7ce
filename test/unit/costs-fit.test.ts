import { describe, expect, it } from 'vitest';
import { fitCost, fitFromAnalytics, loadCost, predict, requestWork } from '../../src-router/costs';
import type { LoadRow, RequestRow } from '../../src-router/store';

const NOW = 10_000_000;
const req = (o: Partial<RequestRow> = {}): RequestRow => ({
  finishedAt: NOW - 1000,
  nodeId: 'n',
  model: 'm',
  localId: 'm',
  backend: 'sim',
  endpoint: 'chat',
  streamed: false,
  tokensGenerated: 100,
  queueWaitMs: 0,
  durationMs: 1000,
  outcome: 'ok',
  ...o,
});
const load = (durationMs: number, success = true): LoadRow => ({
  finishedAt: NOW,
  nodeId: 'n',
  model: 'm',
  localId: 'm',
  backend: 'sim',
  lane: 'text',
  durationMs,
  success,
});

describe('fitCost (PRICE-2)', () => {
  it('has no fit below min_samples', () => {
    expect(
      fitCost(
        [
          { work: 1, durationMs: 10 },
          { work: 2, durationMs: 20 },
        ],
        3,
      ),
    ).toBeNull();
    expect(fitCost([], 0)).toBeNull();
  });

  it('constant work: priced at the mean for that work only, other sizes unpriced', () => {
    const fit = fitCost(
      [
        { work: 5, durationMs: 100 },
        { work: 5, durationMs: 200 },
        { work: 5, durationMs: 300 },
      ],
      3,
    );
    expect(fit).toEqual({ kind: 'constant', work: 5, meanMs: 200, samples: 3 });
    expect(predict(fit, 5)).toBe(200);
    expect(predict(fit, 6)).toBeNull();
  });

  it('varying work: least squares, the fit scales with the work', () => {
    const fit = fitCost(
      [
        { work: 0, durationMs: 100 },
        { work: 10, durationMs: 300 },
        { work: 20, durationMs: 500 },
      ],
      3,
    );
    expect(fit).toEqual({ kind: 'scaled', interceptMs: 100, slopeMsPerWork: 20, samples: 3 });
    expect(predict(fit, 50)).toBe(1100);
  });

  it('a negative slope is flattened to the mean: no prediction goes negative', () => {
    const fit = fitCost(
      [
        { work: 1, durationMs: 300 },
        { work: 2, durationMs: 200 },
        { work: 3, durationMs: 100 },
      ],
      3,
    );
    expect(fit).toEqual({ kind: 'scaled', interceptMs: 200, slopeMsPerWork: 0, samples: 3 });
    expect(predict(fit, 1000)).toBe(200);
  });

  it('a negative intercept is refitted through the origin', () => {
    const fit = fitCost(
      [
        { work: 10, durationMs: 10 },
        { work: 20, durationMs: 100 },
      ],
      2,
    );
    expect(fit?.kind).toBe('scaled');
    if (fit?.kind !== 'scaled') return;
    expect(fit.interceptMs).toBe(0);
    expect(fit.slopeMsPerWork).toBeCloseTo((10 * 10 + 20 * 100) / (100 + 400), 9);
    expect(predict(fit, 0)).toBe(0);
  });

  it('ignores unusable samples and never prices negative or missing work', () => {
    expect(
      fitCost(
        [
          { work: Number.NaN, durationMs: 1 },
          { work: 1, durationMs: -5 },
          { work: 2, durationMs: 10 },
        ],
        2,
      ),
    ).toBeNull();
    expect(predict({ kind: 'scaled', interceptMs: 5, slopeMsPerWork: 1, samples: 3 }, -1)).toBeNull();
    expect(predict(null, 1)).toBeNull();
  });
});

describe('fitFromAnalytics', () => {
  const opts = { now: NOW, windowMs: 60_000, minSamples: 3, lane: 'text' as const };

  it('uses successful rows inside the window, work = tokens generated', () => {
    const rows = [
      req({ tokensGenerated: 10, durationMs: 200 }),
      req({ tokensGenerated: 20, durationMs: 300 }),
      req({ tokensGenerated: 30, durationMs: 400 }),
      req({ tokensGenerated: 40, durationMs: 99_999, outcome: 'error' }),
      req({ tokensGenerated: 50, durationMs: 99_999, finishedAt: NOW - 61_000 }),
      req({ tokensGenerated: null, durationMs: 99_999 }),
      req({ endpoint: 'embedding', tokensGenerated: 60, durationMs: 99_999 }),
    ];
    expect(fitFromAnalytics(rows, opts)).toEqual({ kind: 'scaled', interceptMs: 100, slopeMsPerWork: 10, samples: 3 });
  });

  it('is null until min_samples measured requests are inside the window', () => {
    const rows = [req({ finishedAt: NOW - 70_000 }), req(), req()];
    expect(fitFromAnalytics(rows, opts)).toBeNull();
  });

  it('prices the job, not the wait for the lane (loads are priced separately)', () => {
    const rows = [req({ durationMs: 5000, queueWaitMs: 4000 }), req({ durationMs: 1000 }), req({ durationMs: 1000 })];
    expect(fitFromAnalytics(rows, opts)).toEqual({ kind: 'constant', work: 100, meanMs: 1000, samples: 3 });
  });

  it('image lane: work = pixels × steps × count; constant size → constant fit', () => {
    const img = (o: Partial<RequestRow>) =>
      req({ endpoint: 'image', tokensGenerated: null, imagePixels: 512 * 512, imageSteps: 20, imageCount: 1, ...o });
    expect(requestWork(img({ imageCount: 2 }), 'image')).toBe(512 * 512 * 20 * 2);
    expect(requestWork(img({ imageSteps: null }), 'image')).toBeNull();
    expect(requestWork(req(), 'image')).toBeNull();
    const fit = fitFromAnalytics(
      [img({ durationMs: 900 }), img({ durationMs: 1100 }), img({ durationMs: 1000 }), req()],
      { ...opts, lane: 'image' },
    );
    expect(fit).toEqual({ kind: 'constant', work: 512 * 512 * 20, meanMs: 1000, samples: 3 });
    expect(predict(fit, 1024 * 1024 * 20)).toBeNull();
  });
});

describe('loadCost (PRICE-4)', () => {
  it('is the mean of every successful load, failed loads ignored', () => {
    expect(loadCost([load(1000), load(3000), load(50_000, false)])).toBe(2000);
  });

  it('counts loads never followed by a generation: a helper only ever loaded still has a switch cost', () => {
    // The load rows alone are the data: no request rows are needed.
    expect(loadCost([load(4200)])).toBe(4200);
  });

  it('is null when never loaded successfully', () => {
    expect(loadCost([])).toBeNull();
    expect(loadCost([load(1000, false)])).toBeNull();
  });
});
