/**
 * `npm run fuzz -w @flowline/api [-- --runs 3000 --seed 1]`: the request fuzzer of
 * `test/fuzz.int.test.ts` at full size — every /v1 route of `/openapi.json`, 3,000 cases each
 * by default, against the real app on a fresh Postgres database and real Redis — then the
 * targeted cases of the known bad classes. Prints per route the count of 2xx/4xx/5xx answers
 * and the first few failures (a 5xx, or a 4xx without `{error:{code,message}}`); exits 1 when
 * any case failed.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { KEYS, startHarness } from '../test/harness';
import { caseOf, routesOf, runCase, runCases, targetedCases, type FuzzFailure, type FuzzTally } from '../test/fuzz/fuzz-cases';
import { createFixtures } from '../test/fuzz/fixtures';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3000' }, seed: { type: 'string', default: '1' } } });
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: fuzz [--runs N] [--seed S]');
  process.exit(2);
}

const h = await startHarness();
const started = Date.now();
try {
  const fixtures = await createFixtures(h);
  const routes = routesOf((await h.call('GET', '/openapi.json', { token: null })).body);
  const failures: FuzzFailure[] = [];
  const rows: Array<[string, FuzzTally]> = [];
  for (const [i, route] of routes.entries()) {
    const tally: FuzzTally = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
    const own = await createFixtures(h);
    failures.push(...(await runCases(h, route, fc.sample(caseOf(route, own, KEYS.a), { numRuns: runs, seed: seed + i }), tally)));
    rows.push([route.label, tally]);
    console.log(`${route.label.padEnd(48)} 2xx ${String(tally['2xx']).padStart(5)}  4xx ${String(tally['4xx']).padStart(5)}  5xx ${String(tally['5xx']).padStart(5)}`);
  }
  const targeted = targetedCases(fixtures, KEYS.a);
  const tally: FuzzTally = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  for (const t of targeted) {
    const route = routes.find((r) => r.label === t.route)!;
    const f = await runCase(h, route, t.request, tally);
    if (f) failures.push(f);
  }
  console.log(`${'targeted (NUL, surrogates, int4, numeric, exponents, cursors, Last-Event-ID)'.padEnd(48)} 2xx ${String(tally['2xx']).padStart(5)}  4xx ${String(tally['4xx']).padStart(5)}  5xx ${String(tally['5xx']).padStart(5)}`);
  const total = rows.reduce((n, [, t]) => n + t['2xx'] + t['3xx'] + t['4xx'] + t['5xx'], 0) + targeted.length;
  const fives = rows.reduce((n, [, t]) => n + t['5xx'], 0) + tally['5xx'];
  console.log(`\n${total} requests over ${routes.length} routes in ${((Date.now() - started) / 1000).toFixed(1)} s: ${fives} × 5xx, ${failures.length} failures`);
  for (const f of failures.slice(0, 20)) {
    console.log(`  ${f.route} → ${f.status} (${f.why}): ${f.request.path.slice(0, 160)} ${(f.request.body ?? '').slice(0, 200)} ⇒ ${f.answer.slice(0, 160)}`);
  }
  process.exitCode = failures.length > 0 ? 1 : 0;
} finally {
  await h.close();
}
