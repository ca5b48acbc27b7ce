import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';
import baseConfig from '../e2e/playwright.config';

/**
 * Browser-side measurements (not part of `npm test`, nothing asserts a time): `npx playwright test -c
 * test/e2e-bench/playwright.config.ts` after `npm run build`. Same Chromium and launch options as the e2e tests.
 */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export default defineConfig({
  ...baseConfig,
  testDir: '.',
  testMatch: '**/*.bench.ts',
  outputDir: `${repoRoot}test-results/playwright-bench`,
  timeout: 120_000,
});
