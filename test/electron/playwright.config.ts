import { defineConfig } from '@playwright/test';

// `npm run test:electron` (not part of `npm test`): the desktop app itself, where Electron's binary exists.
export default defineConfig({
  testDir: '.',
  timeout: 90_000,
  workers: 1,
  reporter: 'list',
  outputDir: '../../test-results/electron',
});
