/**
 * Secrets never reach a log line: query parameters that can carry one (the console token or one-time code a UI
 * link holds, keys, passwords) and the user information of an absolute-form target are replaced before a URL is
 * logged. Pure.
 */
const SECRET_KEYS = /token|key|secret|pass|auth|^code$/i;

export function redactUrl(target: string): string {
  // An absolute-form request target can carry credentials before its host: `http://user:pass@host/…`.
  const url =
    target.charCodeAt(0) === 47 ? target : target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1REDACTED@');
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        /* an unreadable name is kept as it is */
      }
      return eq >= 0 && SECRET_KEYS.test(decoded) ? `${name}=REDACTED` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}
