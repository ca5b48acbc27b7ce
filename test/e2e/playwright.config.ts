import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';
import { ensureChromium } from '../support/system-deps';

/** E2E: Debian's Chromium (never `playwright install`), one worker, no retries, artifacts in <repo>/test-results/. */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: `${repoRoot}test-results/playwright`,
  workers: 1,
  retries: 0,
  fullyParallel: false,
  forbidOnly: true,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    screenshot: 'on',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: ensureChromium(),
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
