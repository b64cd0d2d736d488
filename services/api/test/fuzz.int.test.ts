/**
 * Fuzzing every /v1 route of `/openapi.json` (issue 12): a few hundred fast-check cases per
 * route — path segments, query strings, headers and bodies — against the real app on real
 * Postgres and Redis. No case may answer 5xx, and every 4xx carries a keyed
 * `{error:{code,message}}`. Then the known bad classes (NUL, lone surrogates, numbers beyond
 * int4 and Postgres numeric, crafted cursors, a huge Last-Event-ID) each answer 400 or 404.
 * `npm run fuzz -w @flowline/api` runs the same with 3,000 cases per route.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startHarness, type Harness } from './harness';
import { caseOf, routesOf, runCases, targetedCases, type Fixtures, type FuzzFailure, type FuzzRoute, type FuzzTally } from './fuzz/fuzz-cases';
import { createFixtures } from './fuzz/fixtures';

const CASES_PER_ROUTE = 200;

let h: Harness;
let fixtures: Fixtures;
let routes: FuzzRoute[];

beforeAll(async () => {
  h = await startHarness();
  fixtures = await createFixtures(h);
  routes = routesOf((await h.call('GET', '/openapi.json', { token: null })).body);
});
afterAll(async () => {
  await h.close();
});

const show = (f: FuzzFailure) => `${f.route} → ${f.status} (${f.why}): ${f.request.path.slice(0, 200)} ${JSON.stringify(f.request.headers).slice(0, 200)} ${(f.request.body ?? '').slice(0, 300)} ⇒ ${f.answer.slice(0, 120)}`;

describe('fuzzing every route', () => {
  it('reads every /v1 route from /openapi.json', () => {
    expect(routes.length).toBeGreaterThanOrEqual(29);
  });

  it('answers no request with 5xx and every 4xx with {error:{code,message}}', { timeout: 120_000 }, async () => {
    const failures: FuzzFailure[] = [];
    const tallies: Record<string, FuzzTally> = {};
    for (const [i, route] of routes.entries()) {
      const tally: FuzzTally = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
      tallies[route.label] = tally;
      const own = await createFixtures(h);
      failures.push(...(await runCases(h, route, fc.sample(caseOf(route, own, KEYS.a), { numRuns: CASES_PER_ROUTE, seed: 4242 + i }), tally)));
    }
    expect(failures.slice(0, 10).map(show)).toEqual([]);
    // the fuzzer reaches past validation on every route: some answers are not 400/404
    const total = Object.values(tallies).reduce((n, t) => n + t['2xx'] + t['4xx'], 0);
    expect(total).toBe(routes.length * CASES_PER_ROUTE);
  });

  it('answers each known bad class (NUL, lone surrogates, int4 and numeric overflow, crafted cursors, huge Last-Event-ID) with a keyed 400 or 404', async () => {
    const answers: string[] = [];
    for (const t of targetedCases(fixtures, KEYS.a)) {
      const res = await h.app.request(t.request.path, {
        method: t.request.method,
        headers: t.request.headers,
        ...(t.request.body === undefined ? {} : { body: t.request.body }),
      });
      const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      const keyed = res.status < 400 || (typeof body?.error?.code === 'string' && typeof body.error.message === 'string');
      if (!(t.expect ?? [400, 404]).includes(res.status) || !keyed) answers.push(`${t.route} ${t.request.path.slice(0, 120)} ${(t.request.body ?? '').slice(0, 200)} ${JSON.stringify(t.request.headers)} → ${res.status} ${JSON.stringify(body).slice(0, 120)}`);
    }
    expect(answers).toEqual([]);
  });
});
