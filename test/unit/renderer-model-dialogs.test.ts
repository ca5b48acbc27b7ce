import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ApiResult, ConsoleClient } from '../../src-renderer/src/api/console-client';
import { ModelDialog } from '../../src-renderer/src/components/models/model-dialog';
import { RemoveModelDialog } from '../../src-renderer/src/components/models/remove-model-dialog';
import { type AppStore, createAppStore } from '../../src-renderer/src/store/app-store';
import { AppStoreContext } from '../../src-renderer/src/store/use-app-store';
import type { ConsoleModel, EngineInfo, LinkList, LinkRecord } from '../../src-router/contract';

// The Add model and Remove dialogs rendered to markup (no DOM, no effects) from a store holding given server state.

const never = (): Promise<ApiResult<never>> => new Promise(() => {});
const client = new Proxy({}, { get: () => never }) as ConsoleClient;

function render(element: ReturnType<typeof createElement>, state: (store: AppStore) => void): string {
  const store = createAppStore('http://node', { client, now: () => 0 });
  state(store);
  const serving = { ...store, getInitialState: store.getState };
  return renderToStaticMarkup(createElement(AppStoreContext.Provider, { value: serving }, element));
}

const model = {
  publicId: 'chat',
  localId: 'chat',
  nodeId: 'n1',
  backend: 'llama-node',
  capabilities: ['text'],
} as ConsoleModel;
const link = (id: string, owner: string, helper: string): LinkRecord => ({
  id,
  lane: 'text',
  owner: { node_id: owner, model: 'chat' },
  helper: { node_id: helper, model: 'chat' },
  load_if_unloaded: false,
  restore_after_borrow: false,
  weights: 'same',
  acknowledged: false,
  created_at: '',
  updated_at: '',
});
const lane = (links: LinkRecord[]): LinkList => ({ version: 1, links });

describe('Remove model dialog markup', () => {
  it('names every link (both lanes) whose owner or helper is the model on its node', () => {
    const html = render(createElement(RemoveModelDialog, { model, configName: 'chat', onClose: () => {} }), (store) =>
      store.setState((s) => ({
        links: {
          text: { ...s.links.text, list: lane([link('1', 'n1', 'n2'), link('2', 'n3', 'n4')]) },
          image: { ...s.links.image, list: lane([{ ...link('3', 'n2', 'n1'), lane: 'image' }]) },
        },
      })),
    );
    expect(html).toMatch(/<strong>2 links use this model<\/strong>/);
    expect(html).toContain('text: n1/chat → n2/chat');
    expect(html).toContain('image: n2/chat → n1/chat');
    expect(html).not.toContain('n3/chat');
  });

  it('says when no link uses it, once the links are read', () => {
    const html = render(createElement(RemoveModelDialog, { model, configName: 'chat', onClose: () => {} }), (store) =>
      store.setState((s) => ({
        links: { text: { ...s.links.text, list: lane([]) }, image: { ...s.links.image, list: lane([]) } },
      })),
    );
    expect(html).toContain('data-testid="remove-model-no-links"');
  });
});

describe('Add model dialog markup', () => {
  const engines: EngineInfo[] = [
    {
      family: 'llama-node',
      binary: null,
      available: true,
      path: null,
      version: null,
      found_in: 'builtin',
      reason: null,
      how_to_get: null,
    },
    {
      family: 'llama-server',
      binary: 'llama-server',
      available: false,
      path: null,
      version: null,
      found_in: null,
      reason: 'llama-server not on PATH and not built',
      how_to_get: 'routerdesk engines build --only llama-server',
    },
  ];

  it('lists a missing backend disabled, with the reason and how to get it; no native picker in a plain browser', () => {
    const html = render(createElement(ModelDialog, { onClose: () => {}, native: true }), (store) =>
      store.setState({ engines: { value: { engines }, loading: false, failure: null } }),
    );
    expect(html).toMatch(/<option value="llama-server" disabled="" title="[^"]*">llama-server — not found<\/option>/);
    expect(html).toContain('llama-server not on PATH and not built — routerdesk engines build --only llama-server');
    expect(html).not.toContain('model-native-pick');
  });

  it('Edit shows the stored config, and what keeping its name means', () => {
    const entry = {
      name: 'chat',
      file: '/m/chat.yaml',
      config: { name: 'chat', backend: 'llama-node', model: '/m/c.gguf', contextsize: 512, capabilities: ['text'] },
      error: null,
      in_force: null,
    };
    const html = render(createElement(ModelDialog, { onClose: () => {}, native: false, editing: entry }), (store) =>
      store.setState((s) => ({ models: { ...s.models, items: [model, { ...model, localId: 'chat-b' }] } })),
    );
    expect(html).toContain('Edit chat');
    expect(html).toContain('value="512"');
    expect(html).toContain('keeps the public ID chat with its 1 other replica(s) on this node');
  });
});
