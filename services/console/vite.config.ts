/**
 * The console's build: a React SPA under `/console/` (the API serves `dist/` there), the
 * run view and any later editor split into their own chunks, every text asset also
 * written brotli- and gzip-compressed so the API sends it precompressed.
 * `npm run dev -w @flowline/console` proxies the API (FLOWLINE_API_URL, default :3000).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/** Writes `<file>.br` and `<file>.gz` beside every text asset of the build. */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'flowline-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
      for (const file of walk(outDir).filter((f) => /\.(js|css|html|svg|json)$/.test(f))) {
        const body = readFileSync(file);
        writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

const api = process.env.FLOWLINE_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/console/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // the benchmark reads which chunks a first visit loads from it
    manifest: true,
    target: 'es2022',
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: {
      '/v1': api,
      '/socket.io': { target: api, ws: true },
    },
  },
});
