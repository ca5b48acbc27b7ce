import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

// electron-vite has no source-folder option: every entry is named here.
// The main build has three entries: the Electron main process, the router CLI, which runs under plain Node
// (`node out/main/cli.js`), and the replay worker the node starts for what-if replays (`out/main/replay-worker.js`).
export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'src-main/index.ts'),
          cli: resolve(__dirname, 'src-router/cli.ts'),
          'replay-worker': resolve(__dirname, 'src-router/cluster/replay-worker.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      externalizeDeps: true,
      // A sandboxed window cannot run an ES-module preload: emit CommonJS.
      rollupOptions: {
        input: { preload: resolve(__dirname, 'src-main/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    plugins: [react()],
    build: {
      outDir: resolve(__dirname, 'out/renderer'),
      rollupOptions: { input: { index: resolve(__dirname, 'src-renderer/index.html') } },
    },
  },
});
