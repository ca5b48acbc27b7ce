import { request as httpRequest } from 'node:http';

/** An answer as it came: status, headers, the whole body and its trailers (fetch does not expose trailers). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string | undefined>;
  body: string;
}

/** A raw HTTP POST of a JSON body; resolves once the answer ended. */
export function rawPost(url: string, path: string, body: unknown): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: 60_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: text }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The SSE lines of a streamed answer: its comments (`:` lines) and where the first event is. */
export function sseLines(body: string): { lines: string[]; comments: string[]; firstData: number } {
  const lines = body.split('\n').filter(Boolean);
  return {
    lines,
    comments: lines.filter((l) => l.startsWith(':')),
    firstData: lines.findIndex((l) => l.startsWith('data:')),
  };
}

/**
 * A `fetch` for a client library that keeps a copy of every event-stream body it hands over (`raw`, resolved when the
 * body ended): what the server sent, beside what the client made of it.
 */
export function teeFetch(): { fetch: typeof fetch; raw: Promise<string>[] } {
  const raw: Promise<string>[] = [];
  return {
    raw,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
      const [mine, theirs] = res.body.tee();
      raw.push(new Response(mine).text());
      return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    },
  };
}
