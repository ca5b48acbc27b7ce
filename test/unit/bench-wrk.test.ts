import { describe, expect, it } from 'vitest';
import { nginxConfig } from '../../src-router/bench/nginx';
import { REFERENCE_ANSWER, REFERENCE_STREAM } from '../../src-router/bench/proxy-wrk';
import { parseWrk } from '../../src-router/bench/wrk';

// issue #14: the bench reads wrk's report (as Debian's wrk 4 prints it) and runs nginx as the reference upstream.
const report = `Running 2s test @ http://127.0.0.1:18181/v1/chat/completions
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    46.98us  113.56us   2.57ms   98.69%
    Req/Sec    25.37k   432.84    25.82k    72.73%
  Latency Distribution
     50%   34.00us
     75%   34.00us
     90%    1.38ms
     99%  368.00us
  27626 requests in 1.10s, 10.80MB read
Requests/sec:  25118.86
Transfer/sec:      9.82MB
`;

describe("the bench's wrk and nginx parts", () => {
  it('reads requests, req/s and the p50 / p90 latencies in ms, whatever unit wrk chose', () => {
    const r = parseWrk(report)!;
    expect(r.requests).toBe(27626);
    expect(r.rps).toBe(25118.86);
    expect(r.p50Ms).toBeCloseTo(0.034, 6);
    expect(r.p90Ms).toBeCloseTo(1.38, 6);
    expect(parseWrk(report.replace('   34.00us\n     75%', '    2.10s\n     75%'))!.p50Ms).toBe(2100);
  });

  it('a report without its totals is no run', () => {
    expect(parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).toBeNull();
  });

  it('nginx as the reference upstream answers the fixed body; a body nginx would read is refused', () => {
    const conf = nginxConfig('/tmp/x', 8080, { answer: REFERENCE_ANSWER });
    expect(conf).toContain(`return 200 '${REFERENCE_ANSWER}';`);
    expect(conf).not.toContain('proxy_pass');
    expect(nginxConfig('/tmp/x', 8080, 'http://127.0.0.1:9000')).toContain('server 127.0.0.1:9000; keepalive 128;');
    expect(() => nginxConfig('/tmp/x', 8080, { answer: '{"a":"$host"}' })).toThrow(/cannot hold/);
  });

  it('the streamed reference answers a whole SSE stream as one event-stream body, its newlines kept', () => {
    const conf = nginxConfig('/tmp/x', 8080, { answer: REFERENCE_STREAM, type: 'text/event-stream' });
    expect(conf).toContain('default_type text/event-stream;');
    expect(conf).toContain(`return 200 '${REFERENCE_STREAM}';`);
    expect(
      REFERENCE_STREAM.split('\n\n')
        .filter(Boolean)
        .map((e) => e.slice('data: '.length)),
    ).toEqual([
      expect.stringContaining('"content":"hello"'),
      expect.stringContaining('"finish_reason":"stop"'),
      '[DONE]',
    ]);
  });
});
