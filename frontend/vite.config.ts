// Builds the app into ../tensorboard_plugin_profile/static/ with fixed entry names.
//
// index.html  -> loads ./app.js and ./app.css with relative URLs, so the same file works at
//                <prefix>/data/plugin/profile/index.html (TensorBoard) and at / (standalone server).
// index.js    -> the ES module TensorBoard imports; copied verbatim from public/ (it must keep its
//                `render` export, which an HTML-rooted app build would otherwise tree-shake away).
// app.js      -> the bundled app; lazily loaded views and ECharts land in chunks/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const outDir = fileURLToPath(new URL('../tensorboard_plugin_profile/static/', import.meta.url));

export default defineConfig({
  base: './',
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    rolldownOptions: {
      output: {
        entryFileNames: 'app.js',
        chunkFileNames: 'chunks/[name]-[hash].js',
        assetFileNames: (asset) =>
          (asset.names ?? []).some((n) => n.endsWith('.css')) ? 'app.css' : 'assets/[name]-[hash][extname]',
      },
    },
  },
});
