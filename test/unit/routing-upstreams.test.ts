import { describe, expect, it } from 'vitest';
import { emptyUpstreamBook, recordTurn, type StaticRouteTable, upstreamsSnapshot } from '../../src-router/routing';

const ROUTES: StaticRouteTable = {
  big: { engine: 'clutch-layers', endpoints: ['http://10.0.0.1:8000', 'http://10.0.0.2:8000'] },
  small: { endpoints: ['http://10.0.0.3:8000'] },
};

describe('routed upstreams (ROUTE-9)', () => {
  it('every static-route endpoint reads untried until a real turn', () => {
    expect(upstreamsSnapshot(ROUTES, emptyUpstreamBook())).toEqual([
      {
        model: 'big',
        endpoint: 'http://10.0.0.1:8000',
        engine: 'clutch-layers',
        status: 'untried',
        answered: 0,
        notAnswered: 0,
        lastAnswerAt: null,
        lastAnswer: 'never',
      },
      {
        model: 'big',
        endpoint: 'http://10.0.0.2:8000',
        engine: 'clutch-layers',
        status: 'untried',
        answered: 0,
        notAnswered: 0,
        lastAnswerAt: null,
        lastAnswer: 'never',
      },
      {
        model: 'small',
        endpoint: 'http://10.0.0.3:8000',
        engine: null,
        status: 'untried',
        answered: 0,
        notAnswered: 0,
        lastAnswerAt: null,
        lastAnswer: 'never',
      },
    ]);
  });

  it('counts answered and not, keeps the last answer time, never when it never answered', () => {
    const empty = emptyUpstreamBook();
    let book = recordTurn(empty, 'big', 'http://10.0.0.1:8000', true, Date.UTC(2026, 0, 1));
    book = recordTurn(book, 'big', 'http://10.0.0.1:8000', false, Date.UTC(2026, 0, 2));
    book = recordTurn(book, 'big', 'http://10.0.0.2:8000', false, Date.UTC(2026, 0, 3));
    book = recordTurn(book, 'gone', 'http://x', true, 1);
    const [a, b, c] = upstreamsSnapshot(ROUTES, book);
    expect(a).toMatchObject({
      status: 'not_answering',
      answered: 1,
      notAnswered: 1,
      lastAnswer: '2026-01-01T00:00:00.000Z',
    });
    expect(b).toMatchObject({
      status: 'not_answering',
      answered: 0,
      notAnswered: 1,
      lastAnswerAt: null,
      lastAnswer: 'never',
    });
    expect(c.status).toBe('untried');
    expect(upstreamsSnapshot(ROUTES, book)).toHaveLength(3);
    expect(upstreamsSnapshot(ROUTES, empty)[0].status).toBe('untried'); // recordTurn did not touch the old book
    book = recordTurn(book, 'big', 'http://10.0.0.1:8000', true, Date.UTC(2026, 0, 4));
    expect(upstreamsSnapshot(ROUTES, book)[0]).toMatchObject({
      status: 'answering',
      answered: 2,
      lastAnswer: '2026-01-04T00:00:00.000Z',
    });
  });
});
