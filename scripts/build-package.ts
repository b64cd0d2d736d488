/**
 * `npm run build` in one workspace (turbo runs it in each): compiles the package's
 * TypeScript entry points to ESM JavaScript in `dist/` with esbuild, one file per entry.
 *
 * Why esbuild and not `tsc` emit: the sources import relative modules without an
 * extension (moduleResolution Bundler), which Node's ESM loader refuses; bundling the
 * package's own modules into its entry file removes those specifiers. Types stay with
 * `npm run typecheck` (tsc, no emit).
 *
 * Contract of the output:
 * - every npm package stays external, resolved at run time from node_modules (so the
 *   production image needs exactly the packages' `dependencies`);
 * - `@flowline/<lib>[/<sub>]` is rewritten to `@flowline/<lib>[/<sub>]/dist`, the subpath
 *   each lib's `exports` map points at its compiled entry, so `node dist/main.js` runs
 *   against the compiled libs while tsx, vitest and tsc keep resolving the sources;
 * - each entry keeps its depth below the package root (`src/x.ts` → `dist/x.js`), so
 *   `new URL('../drizzle', import.meta.url)` and similar paths resolve the same way.
 *
 * Usage: tsx ../../scripts/build-package.ts [entry ...] (default: src/index.ts and, when
 * present, src/main.ts); writes dist/build-meta.json (inputs and external imports) for the
 * image checks.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { build, type Plugin } from 'esbuild';

const cwd = process.cwd();
const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { name: string };
const args = process.argv.slice(2);
const entries = args.length > 0 ? args : ['src/index.ts', 'src/main.ts'].filter((e) => existsSync(join(cwd, e)));
if (entries.length === 0) {
  console.error(`build: ${pkg.name} has no src/index.ts or src/main.ts and no entry was named`);
  process.exit(1);
}

/**
 * Keeps imports external with the specifier Node's ESM loader accepts: a workspace import
 * becomes its compiled subpath; a deep import into a package without an `exports` map
 * (`ajv/dist/2020`, which CommonJS resolution completes) gets the file it resolves to, and
 * a JSON file from such a package is bundled.
 */
const nodeSpecifiers: Plugin = {
  name: 'flowline-node-specifiers',
  setup(b) {
    b.onResolve({ filter: /^@flowline\// }, (a) => ({ path: `${a.path}/dist`, external: true }));
    b.onResolve({ filter: /^(@[^/.:][^/:]*\/)?[^/.@:][^/:]*\/./ }, (a) => {
      const name = a.path.split('/').slice(0, a.path.startsWith('@') ? 2 : 1).join('/');
      const root = packageRoot(a.resolveDir, name);
      const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports?: unknown };
      if (manifest.exports !== undefined) return { path: a.path, external: true };
      const file = createRequire(join(a.resolveDir, 'noop.js')).resolve(a.path);
      // Node 20 imports JSON only with an import attribute: bundle the data instead
      if (file.endsWith('.json')) return { path: file };
      return { path: `${name}/${relative(root, file).split(sep).join('/')}`, external: true };
    });
  },
};

/** The folder Node's lookup finds `name` in, from `dir` upwards. */
function packageRoot(dir: string, name: string): string {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(d) === d) throw new Error(`build: ${name} is not installed (imported under ${dir})`);
  }
}

rmSync(join(cwd, 'dist'), { recursive: true, force: true });
const result = await build({
  absWorkingDir: cwd,
  entryPoints: entries,
  outdir: 'dist',
  outbase: 'src',
  bundle: true,
  splitting: entries.length > 1,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  plugins: [nodeSpecifiers],
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});

const externals = new Set<string>();
for (const output of Object.values(result.metafile.outputs)) {
  for (const imp of output.imports) if (imp.external) externals.add(imp.path);
}
writeFileSync(
  join(cwd, 'dist', 'build-meta.json'),
  `${JSON.stringify({ package: pkg.name, entries, inputs: Object.keys(result.metafile.inputs).sort(), externals: [...externals].sort() }, null, 2)}\n`,
);
console.log(`build: ${pkg.name} → dist (${entries.join(', ')}; ${externals.size} external imports)`);
