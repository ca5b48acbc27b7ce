import type { FastifyInstance } from 'fastify';

/**
 * The console's Content-Security-Policy (Electron's security checklist): the page's own origin only —
 * its scripts, styles, images and API calls (remote clusters are reached through this node's proxy, never directly);
 * no plugins, no framing, no other base. `src-renderer/index.html` carries the same policy as a meta tag.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * `nosniff` on every answer, the CSP on everything the node serves (streams too: set on the raw response). A callback
 * hook, not an async one: no promise per request.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.raw.setHeader('x-content-type-options', 'nosniff');
    reply.raw.setHeader('content-security-policy', CONSOLE_CSP);
    done();
  });
}
