import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ApiResult, ConsoleClient } from '../../src-renderer/src/api/console-client';
import { RuntimePage } from '../../src-renderer/src/components/runtime/runtime-page';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import { AppStoreContext } from '../../src-renderer/src/store/use-app-store';
import type { RoutingViewWire, RuntimeHealth } from '../../src-router/contract';
import { routingViewFixture } from '../support/renderer-fixtures';

// The Runtime screen rendered to markup (no DOM, no effects) from a store holding given server state: which parts
// show (RT-1), what read-only looks like (ROUTE-8), the empty state (ROUTE-7).

const never = (): Promise<ApiResult<never>> => new Promise(() => {});
/** Every procedure pending forever: the page renders from the state set below only. */
const client = new Proxy({}, { get: () => never }) as ConsoleClient;

const routing = (over: Partial<RoutingViewWire> = {}): RoutingViewWire =>
  routingViewFixture(over, 'clutchcall:inference:routing');

function render(health: RuntimeHealth | null, view: RoutingViewWire | null): string {
  const store = createAppStore('http://node', { client, now: () => 0 });
  store.setState((s) => ({
    runtime: { ...s.runtime, health, fetchedAt: 0 },
    routing: { ...s.routing, view, upstreams: [] },
  }));
  // Server rendering reads a store's initial state (useSyncExternalStore's server snapshot): serve the current one.
  const serving = { ...store, getInitialState: store.getState };
  return renderToStaticMarkup(createElement(AppStoreContext.Provider, { value: serving }, createElement(RuntimePage)));
}

const has = (html: string, testId: string) => html.includes(`data-testid="${testId}"`);

describe('Runtime page markup', () => {
  it('the Routing card says which strategies stay cold per metric profile (llama.cpp: no KV gauge)', () => {
    const strategies = [
      {
        name: 'least-request',
        label: 'least request',
        requires: ['num_requests_running', 'num_requests_waiting'],
        weightable: true,
      },
      {
        name: 'least-kv-cache',
        label: 'least KV cache',
        requires: ['kv_cache_usage', 'kv_cache_usage_cpu'],
        weightable: true,
      },
    ];
    const html = render({ published: false }, routing({ strategies }));
    expect(has(html, 'profile-notes')).toBe(true);
    const note = /<li[^>]*data-testid="profile-note-llama.cpp"[^>]*>(.*?)<\/li>/.exec(html);
    expect(note?.[0]).toContain('data-cold="least KV cache"');
    expect(note?.[1]).toContain('llamacpp:requests_processing');
    expect(note?.[1]).toContain('least KV cache stays cold (a random ready pod) for its pods.');
    expect(/data-testid="profile-note-clutch-layers"[^>]*data-cold=""/.test(html)).toBe(true);
  });

  it('absent blob: the note only; banner, gauges, self-tests, serving config hidden; the Routing card stays', () => {
    const html = render({ published: false }, routing());
    expect(has(html, 'runtime-not-published')).toBe(true);
    expect(html).toContain('publishes no runtime stats');
    for (const id of ['runtime-banner', 'gauge-gpu', 'gauge-cpu', 'gauge-memory', 'self-tests', 'serving-config'])
      expect(has(html, id), id).toBe(false);
    expect(has(html, 'routing-card')).toBe(true);
    expect(has(html, 'strategy-least-request')).toBe(true);
  });

  it('a published blob with nothing in it: — and not reported, no pill, no NaN, no listener', () => {
    const html = render({ published: true, blob: {} }, routing());
    expect(has(html, 'runtime-banner')).toBe(true);
    expect(has(html, 'banner-nominal')).toBe(false);
    expect(html).toContain('not reported');
    expect(html).toContain('The engine did not report serving config.');
    expect(html).toContain('No self-tests reported.');
    expect(html).not.toContain('NaN');
    expect(html.toLowerCase()).not.toContain('listen');
    expect(html).not.toMatch(/>CUDA</);
  });

  it('writes off on the deployment: every control disabled, the gate in the tooltip, no restart button', () => {
    const html = render({ published: false }, routing({ writable: false }));
    expect(html).toContain('Read-only on this deployment');
    expect(html).toContain('console.routing_writes_enabled');
    const controls =
      html.match(
        /<(button|input|select)[^>]*data-testid="(strategy-[^"]+|multi-spec|metric-profile|routing-apply|routing-reset)"[^>]*>/g,
      ) ?? [];
    expect(controls.length).toBe(7);
    for (const c of controls) expect(c, c).toContain('disabled');
    expect(html.toLowerCase()).not.toContain('restart</button>');
  });

  it('not an operator: Read-only for your account', () => {
    expect(render(null, routing({ canWrite: false }))).toContain('Read-only for your account');
  });

  it('no beacon: engine not reporting and the explanation, never engine in sync', () => {
    const html = render(
      null,
      routing({ effective: null, engineReporting: false, desired: { strategy: 'least-request', routes_engine: null } }),
    );
    expect(html).toContain('engine not reporting');
    expect(html).not.toContain('engine in sync');
    expect(html).toContain('clutchcall:inference:routing.effective');
    expect(html).toContain('stored as desired state');
  });

  it('no strategies: the empty state with a retry instead of the controls', () => {
    const html = render(null, routing({ strategies: [] }));
    expect(has(html, 'routing-empty')).toBe(true);
    expect(has(html, 'routing-retry')).toBe(true);
    expect(has(html, 'routing-controls')).toBe(false);
  });
});

describe('screens', () => {
  it('the address names the screen; anything else is Models', async () => {
    const { screenFromHash } = await import('../../src-renderer/src/screens');
    expect(screenFromHash('#runtime')).toBe('runtime');
    expect(screenFromHash('#/runtime')).toBe('runtime');
    expect(screenFromHash('#models')).toBe('models');
    expect(screenFromHash('')).toBe('models');
    expect(screenFromHash('#nope')).toBe('models');
  });
});
