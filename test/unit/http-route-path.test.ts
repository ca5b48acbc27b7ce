import { describe, expect, it } from 'vitest';
import { targetAuthority, targetPath } from '../../src-router/http/route-path';

// Issue #26 item 1: a request that matched no route is decided on its target's path in origin form.
describe('request targets in origin form', () => {
  it('origin-form and absolute-form give the same path, without query or fragment', () => {
    expect(targetPath('/v1/models?x=1')).toBe('/v1/models');
    expect(targetPath('http://x/v1/models?x=1')).toBe('/v1/models');
    expect(targetPath('HTTP://X:80/api/tags#f')).toBe('/api/tags');
    expect(targetPath('//v1/models')).toBe('//v1/models');
    expect(targetPath('*')).toBe('*');
  });

  it('only an absolute-form target has an authority', () => {
    expect(targetAuthority('http://evil.example:8080/v1/models')).toBe('evil.example:8080');
    expect(targetAuthority('http://u:p@127.0.0.1/v1')).toBe('127.0.0.1');
    expect(targetAuthority('/v1/models')).toBeUndefined();
    expect(targetAuthority('//evil.example/v1/models')).toBeUndefined();
    expect(targetAuthority('not a url')).toBeUndefined();
  });
});
