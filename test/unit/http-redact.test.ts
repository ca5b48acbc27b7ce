import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src-router/http/redact';

// Issue #9: the console token never appears in a log line.
describe('URLs as logged', () => {
  it('secrets in the query string are replaced; everything else is kept', () => {
    expect(redactUrl('/?token=abc123')).toBe('/?token=REDACTED');
    expect(redactUrl('/router/v1/console/decisions?limit=10&access_token=x&model=a')).toBe(
      '/router/v1/console/decisions?limit=10&access_token=REDACTED&model=a',
    );
    expect(redactUrl('/x?api%5Fkey=s&Password=p&q')).toBe('/x?api%5Fkey=REDACTED&Password=REDACTED&q');
    expect(redactUrl('/v1/models')).toBe('/v1/models');
  });

  it("issue #26 item 1: an absolute-form target's user information is replaced too", () => {
    expect(redactUrl('http://alice:s3cret@127.0.0.1:8080/v1/models?key=k')).toBe(
      'http://REDACTED@127.0.0.1:8080/v1/models?key=REDACTED',
    );
    expect(redactUrl('http://127.0.0.1:8080/v1/models')).toBe('http://127.0.0.1:8080/v1/models');
    expect(redactUrl('/a@b/c')).toBe('/a@b/c');
  });

  it("item 7: the one-time code of serve's link is replaced too", () => {
    expect(redactUrl('/?code=c0de&cluster=lab')).toBe('/?code=REDACTED&cluster=lab');
    expect(redactUrl('/?Code=c0de')).toBe('/?Code=REDACTED');
    expect(redactUrl('/?zipcode=1')).toBe('/?zipcode=1');
  });
});
