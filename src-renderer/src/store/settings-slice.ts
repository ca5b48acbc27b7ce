import type { SettingsAnswer, SettingsView } from '../../../src-router/contract';
import type { ApiFailure, ApiResult } from '../api/console-client';
import { movedLink } from '../settings/follow-move';
import { sameOrigin, waitForRestart } from '../settings/restart-wait';
import type { SliceCreator } from './types';

/**
 * After a save: `waiting` for the restarted node's /health, `back` once it answered and everything was read again,
 * `restored` when it answered but could not start on the new settings (the view says why; the previous settings were
 * put back), `moving` while the page waits to follow the node to another origin (a new port) with the save's one-time
 * code, `moved` when it listens at another origin and the page could not follow (a link, with the code when there is
 * one), `timeout` when it did not come back in time.
 */
export type RestartPhase = 'idle' | 'waiting' | 'back' | 'restored' | 'moving' | 'moved' | 'timeout';

export interface SettingsState {
  /** `GET /router/v1/console/settings` as last read; null before the first good answer. */
  view: SettingsView | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
  saving: boolean;
  /** `link`: where to open the console after a move (with the one-time code when the save gave one). */
  restart: { phase: RestartPhase; url: string | null; message: string | null; link?: string | null };
}

export interface SettingsSlice {
  settings: SettingsState;
  /** Re-reads the node's settings (concurrent calls share one round trip). */
  fetchSettings(): Promise<void>;
  /**
   * PUTs the whole config and returns the node's answer as is (a 400 names the field path). A save that restarted
   * the node waits for it at the answer's URL, then reads everything again (settings, models and node, cluster).
   */
  saveSettings(config: Record<string, unknown>): Promise<ApiResult<SettingsAnswer>>;
}

const IDLE = { phase: 'idle', url: null, message: null } as const;

export const createSettingsSlice: SliceCreator<SettingsSlice> = (deps) => (set, get) => {
  const patch = (p: Partial<SettingsState>) => set((s) => ({ settings: { ...s.settings, ...p } }));
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  async function load(): Promise<void> {
    patch({ loading: true });
    const result = await deps.client.settings();
    if (result.ok) patch({ view: result.value, loading: false, failure: null, fetchedAt: deps.now() });
    // A rejected token or a refusal (not an operator) hides what was shown; a transient failure keeps it.
    else
      patch({
        view: ['rejected', 'no-token', 'refused'].includes(result.failure.kind) ? null : get().settings.view,
        loading: false,
        failure: result.failure,
      });
  }

  let inFlight: Promise<void> | null = null;
  const fetchSettings = () => {
    inFlight ??= load().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };

  async function followRestart(url: string, before: string | null, code: string | undefined): Promise<void> {
    if (!sameOrigin(url, get().connection.url)) {
      const link = code ? movedLink(url, code) : `${url.replace(/\/+$/, '')}/#settings`;
      if (code && deps.followMove) {
        patch({ restart: { phase: 'moving', url, message: null, link } });
        // On success the page is on its way to the new address.
        if (await deps.followMove(url, code)) return;
      }
      return patch({ restart: { phase: 'moved', url, message: null, link } });
    }
    patch({ restart: { phase: 'waiting', url, message: null } });
    const waited = await waitForRestart({ probe: () => deps.client.health(), before, now: deps.now, sleep });
    if (!waited.ok) return patch({ restart: { phase: 'timeout', url, message: waited.message } });
    await Promise.all([fetchSettings(), get().refresh(), get().fetchCluster()]);
    const failed = get().settings.view?.restartError ?? null;
    patch({ restart: { phase: failed ? 'restored' : 'back', url, message: failed } });
  }

  async function saveSettings(config: Record<string, unknown>): Promise<ApiResult<SettingsAnswer>> {
    patch({ saving: true, restart: IDLE });
    try {
      // The node that takes the save, to tell the restarted one from it.
      const health = await deps.client.health();
      const result = await deps.client.putSettings(config);
      if (!result.ok) return result;
      // Not restarted: the config equals the file, nothing changed to read again.
      if (result.value.restarted)
        await followRestart(result.value.url, health.ok ? health.value.started_at : null, result.value.code);
      return result;
    } finally {
      patch({ saving: false });
    }
  }

  return {
    settings: { view: null, loading: false, failure: null, fetchedAt: null, saving: false, restart: IDLE },
    fetchSettings,
    saveSettings,
  };
};
