import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseNodeConfig } from '../../src-router/config';
import { configPlacementIssues } from '../../src-router/config/config-placement';

// Issue #37 item 2: models.shared_dir may not hold the node config file (its tokens, its backup, its temporaries).

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-placement-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
mkdirSync(join(tmp, 'conf', 'shared'), { recursive: true });
mkdirSync(join(tmp, 'elsewhere'), { recursive: true });
writeFileSync(join(tmp, 'conf', 'node.yaml'), '{}');
symlinkSync(join(tmp, 'conf'), join(tmp, 'elsewhere', 'conf-link'));
symlinkSync(join(tmp, 'conf', 'node.yaml'), join(tmp, 'elsewhere', 'node-link.yaml'));

const issues = (shared: string, file = join(tmp, 'conf', 'node.yaml')) =>
  configPlacementIssues(parseNodeConfig({ models: { shared_dir: shared } }, file, join(tmp, 'conf')), file);

describe('a shared folder that holds the node config is refused at models.shared_dir', () => {
  it.each([
    ['the config folder', '.'],
    ['the config folder, absolute', join(tmp, 'conf')],
    ['a parent of it', '..'],
    ['a symlink to the config folder', join(tmp, 'elsewhere', 'conf-link')],
  ])('%s', (_what, shared) => {
    expect(issues(shared)).toEqual([
      { path: 'models.shared_dir', message: expect.stringMatching(/holds the node config file .*conf\/node\.yaml/) },
    ]);
  });

  it('a config named through a symlink whose real file lies in the shared folder', () => {
    expect(issues(join(tmp, 'conf'), join(tmp, 'elsewhere', 'node-link.yaml'))).toHaveLength(1);
  });

  it('a subfolder beside the config, another folder, or none is fine', () => {
    expect(issues('./shared')).toEqual([]);
    expect(issues(join(tmp, 'elsewhere'))).toEqual([]);
    expect(issues('')).toEqual([]);
    expect(issues('./not-created-yet')).toEqual([]);
  });
});
