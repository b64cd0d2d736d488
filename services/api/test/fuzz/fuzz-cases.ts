/**
 * Property-based request fuzzing of the API (issue 12: no input answers 5xx, every 4xx is a
 * keyed `{error:{code,message}}`). The route list is read from `/openapi.json`, so a new
 * route is fuzzed without anyone listing it. Each case is one request built by fast-check:
 * path segments (fixtures, unknown ids, fuzzed and percent-encoded strings, NUL, lone
 * surrogates), query strings (limits, sequence numbers, and cursors crafted for every paged
 * route: instants that are none, tags, ids) and bodies (each route's valid template mutated
 * member by member with JSON values whose strings hold NUL and lone surrogates and whose
 * number tokens go beyond int4, 2^53 and Postgres `numeric`, many written with an exponent
 * a store could spell out in full, or replaced by any JSON value or by text that is not JSON).
 * Used by `fuzz.int.test.ts` (a few hundred cases per route) and `scripts/fuzz.ts` (3,000).
 * Not a test file.
 */
import fc from 'fast-check';
import type { Harness } from '../harness';

/** A route of the OpenAPI document. */
export interface FuzzRoute {
  method: string;
  /** OpenAPI path template, e.g. `/v1/runs/{id}/nodes/{key}` */
  template: string;
  label: string;
  query: string[];
  headers: string[];
  hasBody: boolean;
}

/** The fixtures path parameters and bodies refer to (tenant A's). */
export interface Fixtures {
  defId: string;
  chatDefId: string;
  runId: string;
  /** a finished run: its SSE stream ends */
  doneRunId: string;
  convId: string;
  nodeKeys: string[];
  edgeKeys: string[];
}

/** One request. `path` is already percent-encoded; `body` is the raw body text. */
export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** What one case broke, for the report. */
export interface FuzzFailure {
  route: string;
  status: number;
  why: string;
  request: FuzzCase;
  answer: string;
}

export interface FuzzTally {
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

/** Every /v1 route of the OpenAPI document. */
export function routesOf(doc: { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: unknown }>> }): FuzzRoute[] {
  return Object.entries(doc.paths)
    .filter(([p]) => p.startsWith('/v1/'))
    .flatMap(([template, ops]) =>
      Object.entries(ops).map(([m, op]) => ({
        method: m.toUpperCase(),
        template,
        label: `${m.toUpperCase()} ${template}`,
        query: (op.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name),
        headers: (op.parameters ?? []).filter((x) => x.in === 'header').map((x) => x.name),
        hasBody: op.requestBody !== undefined,
      })),
    );
}

// ------------------------------------------------------------------ JSON with raw number tokens

/** A JSON value whose numbers are raw tokens (`{ num: '0.1e-999999' }`), written verbatim. */
type Raw = null | boolean | string | { num: string } | Raw[] | { obj: Array<[string, Raw]> };

const UNIT = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '😀', 'é', '\u202e') },
);

/** Strings that break storage or parsing, and plain fuzz. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: UNIT, maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udbff\udbff', '😀', '__proto__', 'constructor',
      'null', '0', '-1', '1e400', '../..', '%00', 'x'.repeat(129), 'y'.repeat(5000), 'Approve', 'Answer', 'one', 'node',
      '00000000-0000-4000-8000-000000000000', 'start', 'e1', 'gate', 'true',
    ),
  },
);

/**
 * Number tokens written with an exponent, heavy on the ones a store could spell out in full
 * (`1e131071` is 8 characters and 131,072 digits): mantissas with and without a fraction or
 * a sign, `e`/`E`, an optional exponent sign, exponents small, around a double's range (308,
 * 324), around Postgres `numeric`'s (16,383 after the point, 131,072 before) and far beyond.
 */
export const exponentToken: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(fc.nat({ max: 99 }).map(String), fc.tuple(fc.nat({ max: 9 }), fc.nat({ max: 99_999 })).map(([i, f]) => `${i}.${f}`), fc.constantFrom('0', '0.0', '9.999999999999999999999')),
    fc.constantFrom('e', 'E'),
    fc.constantFrom('', '+', '-'),
    fc.oneof(
      fc.nat({ max: 30 }),
      fc.integer({ min: 300, max: 330 }),
      fc.integer({ min: 16_370, max: 16_400 }),
      fc.integer({ min: 131_060, max: 131_080 }),
      fc.constantFrom(100_000, 999_999, 2_147_483_648, 99_999_999_999),
    ),
  )
  .map(([sign, mantissa, e, expSign, exp]) => `${sign}${mantissa}${e}${expSign}${exp}`);

/** Number tokens around every range the API and Postgres have. */
export const numberToken: fc.Arbitrary<string> = fc.oneof(
  exponentToken,
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom(
    '0', '-0', '1', '-1', '2147483647', '2147483648', '-2147483649', '4294967296', '9007199254740993', '1e400', '-1e400',
    '0.1e-999999', '1e131072', '1e-16384', '0e-20000', '1E+2', '1.5', '99999999999999999999', '200', '201', '1e308',
    '1e131071', '-1E+131071', '1e-16383', '9.9e131070', '1e100000',
  ),
);

const rawLeaf: fc.Arbitrary<Raw> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  nastyString,
  numberToken.map((num) => ({ num })),
);

const rawValue: fc.Arbitrary<Raw> = fc.letrec<{ v: Raw }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: rawLeaf },
    { weight: 1, arbitrary: fc.array(tie('v'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(fc.tuple(nastyString, tie('v')), { maxLength: 4 }).map((obj) => ({ obj })) },
  ),
})).v;

function isNum(v: Raw): v is { num: string } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && 'num' in v;
}

/** JSON text of a raw value: numbers verbatim, strings escaped by JSON.stringify (lone surrogates as `\udXXX`). */
export function rawText(v: Raw): string {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (isNum(v)) return v.num;
  if (Array.isArray(v)) return `[${v.map(rawText).join(',')}]`;
  return `{${v.obj.map(([k, x]) => `${JSON.stringify(k)}:${rawText(x)}`).join(',')}}`;
}

/** A plain JSON value as a raw value. */
function toRaw(v: unknown): Raw {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return { num: String(v) };
  if (Array.isArray(v)) return v.map(toRaw);
  return { obj: Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toRaw(x)] as [string, Raw]) };
}

/** The containers (object members and array items) of a raw value, preorder. */
function slots(v: Raw, out: Array<{ parent: Raw[] | { obj: Array<[string, Raw]> }; index: number }> = []) {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push({ parent: v, index: i });
      slots(x, out);
    });
  } else if (v !== null && typeof v === 'object' && 'obj' in v) {
    v.obj.forEach(([, x], i) => {
      out.push({ parent: v, index: i });
      slots(x, out);
    });
  }
  return out;
}

type Mutation = { at: number; op: 'replace' | 'delete' | 'add'; value: Raw; name: string };

/** Applies the mutations to a deep copy of `template`. */
function mutate(template: unknown, mutations: Mutation[]): Raw {
  const root = toRaw(structuredClone(template));
  for (const m of mutations) {
    const all = slots(root);
    if (all.length === 0) break;
    const s = all[m.at % all.length]!;
    const list: unknown[] = Array.isArray(s.parent) ? s.parent : s.parent.obj;
    if (m.op === 'delete') list.splice(s.index, 1);
    else if (m.op === 'add') list.push(Array.isArray(s.parent) ? m.value : ([m.name, m.value] as [string, Raw]));
    else if (Array.isArray(s.parent)) s.parent[s.index] = m.value;
    else s.parent.obj[s.index] = [s.parent.obj[s.index]![0], m.value];
  }
  return root;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'replace', 'delete', 'add'),
  value: rawValue,
  name: nastyString,
});

/** Body text for a route: its template as is, mutated, any JSON value, or not JSON at all. */
function bodyText(template: unknown): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(JSON.stringify(template)) },
    { weight: 8, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => rawText(mutate(template, ms))) },
    { weight: 2, arbitrary: rawValue.map(rawText) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom('', '{', '[1,', '{"a":1}}', 'nul', '\ufeff{}', '[' .repeat(2000), `{"a":${'['.repeat(1001)}`, '"\\ud800"', '{"x":"\\u0000"}'),
        fc.string({ unit: UNIT, maxLength: 40 }),
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

// ------------------------------------------------------------------ path, query, headers

/** Percent-encodes a segment byte-exactly, keeping lone surrogates as their (invalid) CESU bytes. */
function encodeSegment(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

function segment(fixtures: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...fixtures).map(encodeSegment) },
    { weight: 1, arbitrary: fc.uuid().map(encodeSegment) },
    { weight: 3, arbitrary: nastyString.filter((s) => s !== '').map(encodeSegment) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '%ED%A0%80', '%C0%80', '%FF', 'a%2Fb', '%2e%2e') },
  );
}

/** `YYYY-MM-DDTHH:MM:SS.ffffff` of any digits: real instants, February 30, month 13, hour 24, year 0000. */
const craftedInstant: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 2024, 2026, 9999)),
    fc.oneof(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 1, max: 13 })),
    fc.oneof(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 28, max: 32 })),
    fc.oneof(fc.integer({ min: 0, max: 99 }), fc.constantFrom(0, 23, 24)),
    fc.integer({ min: 0, max: 99 }),
    fc.oneof(fc.integer({ min: 0, max: 99 }), fc.constantFrom(59, 60)),
    fc.integer({ min: 0, max: 999_999 }),
  )
  .map(([y, mo, d, h, mi, s, us]) => {
    const p = (n: number, w: number) => String(n).padStart(w, '0');
    return `${p(y, 4)}-${p(mo, 2)}-${p(d, 2)}T${p(h, 2)}:${p(mi, 2)}:${p(s, 2)}.${p(us, 6)}`;
  });

/**
 * A cursor that passes or nearly passes the format checks of every paged route: keyset
 * cursors untagged (definitions, runs) and tagged `c:` (conversations) with crafted
 * instants and ids (uuids, conversation-like ids, NUL, lone surrogates, other tags),
 * version cursors (`v` and any number), message seqs of any size, and noise.
 */
const craftedCursor: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.constantFrom('', 'c:', 'C:', 'm:', 'v'), craftedInstant, fc.oneof(fc.uuid(), fc.constantFrom('conv-1', 'x'.repeat(128), 'x'.repeat(129), 'a|b', ''), nastyString))
    .map(([tag, at, id]) => Buffer.from(`${tag}${at}|${id}`).toString('base64url')),
  fc.oneof(fc.bigInt({ min: -1n, max: 10n ** 12n }), fc.constantFrom(0n, 2_147_483_647n, 2_147_483_648n)).map((n) => Buffer.from(`v${n}`).toString('base64url')),
  fc.bigInt({ min: 0n, max: 10n ** 16n }).map((n) => Buffer.from(`m:${n}`).toString('base64url')),
  nastyString.map((s) => Buffer.from(s).toString('base64url')),
  nastyString,
);

const queryValue: Record<string, fc.Arbitrary<string>> = {
  limit: fc.oneof(numberToken, nastyString),
  afterSeq: fc.oneof(numberToken, nastyString),
  cursor: craftedCursor,
  status: fc.oneof(fc.constantFrom('Pending', 'Running', 'Completed', 'running', ''), nastyString),
  definitionId: fc.oneof(fc.uuid(), nastyString),
  conversationId: fc.oneof(fc.constantFrom('\u0000', 'a\u0000', '\ud800'), nastyString),
};

function queryString(names: string[]): fc.Arbitrary<string> {
  if (names.length === 0) return fc.constant('');
  return fc
    .tuple(...names.map((n) => fc.option(queryValue[n] ?? nastyString, { nil: undefined, freq: 2 })))
    .map((values) => {
      const parts = values.flatMap((v, i) => (v === undefined ? [] : [`${names[i]}=${encodeSegment(v)}`]));
      return parts.length === 0 ? '' : `?${parts.join('&')}`;
    });
}

/** Header values are ByteStrings: fuzz within latin-1. */
const headerValue: fc.Arbitrary<string> = fc.oneof(
  numberToken,
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 250 }),
  fc.constantFrom('-1', '2147483648', '99999999999999999999', '1e400', 'abc', ''),
);

// ------------------------------------------------------------------ templates

/** A body each route's validator accepts (the starting point of mutation). */
export function bodyTemplate(route: FuzzRoute, f: Fixtures): unknown {
  const line = {
    nodes: [
      { key: 'start', kind: 'Start', config: { inputSchema: { type: 'object' } } },
      { key: 'cond', kind: 'Condition', config: { path: 'output.input.n' } },
      { key: 'sub', kind: 'Subworkflow', config: { definitionId: f.defId } },
      { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'cond' },
      { key: 'e2', from: 'cond', to: 'sub', condition: { op: 'Gt', value: 2147483648 } },
      { key: 'e3', from: 'cond', to: 'end', default: true },
      { key: 'e4', from: 'sub', to: 'end' },
    ],
  };
  const byLabel: Record<string, unknown> = {
    'POST /v1/definitions': { name: 'fuzz', description: 'd', graph: line },
    'PUT /v1/definitions/{id}': { name: 'fuzz', version: 1, graph: line },
    'POST /v1/definitions/validate': { graph: line },
    'POST /v1/definitions/{id}/runs': { requestId: 'r-1', input: { n: 1, s: 'x' }, conversationId: 'c-1' },
    'POST /v1/runs/{id}/cancel': { reason: 'enough' },
    'POST /v1/runs/{id}/nodes/{key}/decide': { operationId: 'op-1', decision: 'Approve', comment: 'ok', payload: { text: 'hi' } },
    'POST /v1/runs/{id}/nodes/{key}/steer': { operationId: 'st-1', message: 'be brief' },
    'POST /v1/runs/{id}/step': { mode: 'node', nodeKey: 't3' },
    'PUT /v1/runs/{id}/breakpoints': { nodeKeys: ['t3', 'gate'] },
    'PUT /v1/runs/{id}/edges/{edgeKey}/override': { verdict: true },
    'POST /v1/runs/{id}/nodes/{key}/complete': { output: { done: true, n: 1 } },
    'PUT /v1/runs/{id}/nodes/{key}/input': { input: { edited: 1 } },
    'POST /v1/runs/{id}/migrate': { toVersion: 1, nodeMap: { t3: 't3' }, dryRun: true },
    'PUT /v1/definitions/{id}/aliases/{name}': { targets: [{ version: 1, percent: 10 }] },
    'POST /v1/conversations/{id}/messages': {
      definitionId: f.chatDefId,
      text: 'hello',
      requestId: 'm-1',
      attachments: [{ fileId: 'f', name: 'n.txt', kind: 'text', bytes: 3 }],
    },
  };
  return byLabel[route.label] ?? {};
}

/** The arbitrary of one route's requests. */
export function caseOf(route: FuzzRoute, f: Fixtures, token: string): fc.Arbitrary<FuzzCase> {
  const params = [...route.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const conv = route.template.startsWith('/v1/conversations');
  const runFixture = route.label === 'GET /v1/runs/{id}/stream' ? f.doneRunId : f.runId;
  const segs = params.map((p) => {
    if (p === 'id') return segment(conv ? [f.convId] : route.template.startsWith('/v1/definitions') ? [f.defId, f.chatDefId] : [runFixture]);
    if (p === 'edgeKey') return segment(f.edgeKeys);
    return segment(f.nodeKeys);
  });
  const headerNames = route.headers.filter((h) => h === 'idempotency-key' || h === 'last-event-id');
  return fc
    .record({
      segs: fc.tuple(...segs),
      query: queryString(route.query),
      headers: fc.tuple(...headerNames.map(() => fc.option(headerValue, { nil: undefined }))),
      body: route.hasBody || route.method !== 'GET' ? bodyText(bodyTemplate(route, f)) : fc.constant(undefined),
      contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', 'application/json; charset=latin1'),
    })
    .map(({ segs: values, query, headers, body, contentType }) => {
      let i = 0;
      const path = route.template.replace(/\{\w+\}/g, () => values[i++]!) + query;
      const h: Record<string, string> = { authorization: `Bearer ${token}` };
      headerNames.forEach((name, j) => {
        const v = headers[j];
        if (v !== undefined) h[name] = v;
      });
      if (body !== undefined) h['content-type'] = contentType;
      return { method: route.method, path, headers: h, ...(body === undefined ? {} : { body }) };
    });
}

/** Sends one case in process; returns the failure it shows, or null. */
export async function runCase(h: Harness, route: FuzzRoute, c: FuzzCase, tally: FuzzTally): Promise<FuzzFailure | null> {
  const res = await h.app.request(c.path, { method: c.method, headers: c.headers, ...(c.body === undefined ? {} : { body: c.body }) });
  // an SSE stream of a run: the frames are not needed, only that it opened
  const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? (await res.body?.cancel(), '') : await res.text();
  const bucket = `${Math.floor(res.status / 100)}xx` as keyof FuzzTally;
  if (bucket in tally) tally[bucket]++;
  const fail = (why: string): FuzzFailure => ({ route: route.label, status: res.status, why, request: c, answer: text.slice(0, 300) });
  if (res.status >= 500) return fail('answered 5xx');
  if (res.status >= 400) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail('a 4xx without a JSON body');
    }
    const err = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (typeof err?.code !== 'string' || typeof err.message !== 'string') return fail('a 4xx without {error:{code,message}}');
  }
  return null;
}

/** Runs `cases` of one route, `inFlight` at a time; returns the failures. */
export async function runCases(h: Harness, route: FuzzRoute, cases: FuzzCase[], tally: FuzzTally, inFlight = 4): Promise<FuzzFailure[]> {
  const failures: FuzzFailure[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const f = await runCase(h, route, cases[next++]!, tally);
      if (f) failures.push(f);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return failures;
}

// ------------------------------------------------------------------ targeted cases

/** The known bad classes of issue 12 item 4, each as a request that must answer a keyed 400 or 404 (or `expect`). */
export function targetedCases(f: Fixtures, token: string): Array<{ route: string; request: FuzzCase; expect?: number[] }> {
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const post = (label: string, path: string, body: string, method = 'POST') => ({ route: label, request: { method, path, headers: json, body } });
  const get = (label: string, path: string, headers: Record<string, string> = {}) => ({ route: label, request: { method: 'GET', path, headers: { ...auth, ...headers } } });
  const cursor = (s: string) => Buffer.from(s).toString('base64url');
  const out: Array<{ route: string; request: FuzzCase; expect?: number[] }> = [];
  for (const bad of ['"a\\u0000b"', '"\\ud800"', '"x\\udfff"', '0.1e-999999', '1e131072', '1e-16384']) {
    out.push(post('POST /v1/definitions/{id}/runs', `/v1/definitions/${f.defId}/runs`, `{"input":{"v":${bad}}}`));
    if (bad.startsWith('"')) out.push(post('POST /v1/definitions/{id}/runs', `/v1/definitions/${f.defId}/runs`, `{"input":{${bad}:1}}`));
    out.push(post('POST /v1/definitions', '/v1/definitions', `{"name":"n","graph":{"nodes":[{"key":"s","kind":"Start","config":{"defaultInput":{"v":${bad}}}},{"key":"e","kind":"End","config":{"outcome":"x"}}],"edges":[{"key":"e1","from":"s","to":"e","condition":{"path":"output.x","op":"Eq","value":${bad}}}]}}`));
    out.push(post('POST /v1/definitions/validate', '/v1/definitions/validate', `{"graph":{"nodes":[],"edges":[],"x":${bad}}}`));
    out.push(post('POST /v1/runs/{id}/nodes/{key}/complete', `/v1/runs/${f.runId}/nodes/t3/complete`, `{"output":{"v":${bad}}}`));
    out.push(post('PUT /v1/runs/{id}/nodes/{key}/input', `/v1/runs/${f.runId}/nodes/t2/input`, `{"input":{"v":${bad}}}`, 'PUT'));
    out.push(post('POST /v1/runs/{id}/nodes/{key}/decide', `/v1/runs/${f.runId}/nodes/gate/decide`, `{"operationId":"o","decision":"Approve","payload":{"v":${bad}}}`));
    if (bad.startsWith('"')) {
      out.push(post('POST /v1/definitions', '/v1/definitions', `{"name":${bad},"graph":{}}`));
      out.push(post('POST /v1/runs/{id}/nodes/{key}/steer', `/v1/runs/${f.runId}/nodes/llm/steer`, `{"operationId":${bad},"message":${bad}}`));
      out.push(post('POST /v1/conversations/{id}/messages', `/v1/conversations/${f.convId}/messages`, `{"definitionId":"${f.chatDefId}","text":${bad},"requestId":${bad}}`));
      out.push(post('POST /v1/definitions/{id}/runs', `/v1/definitions/${f.defId}/runs`, `{"requestId":${bad},"conversationId":${bad}}`));
    }
  }
  for (const seg of ['%00', 'a%00b', '%ED%A0%80', '%C0%80', 'x%00'.repeat(40)]) {
    out.push(get('GET /v1/runs/{id}/nodes/{key}', `/v1/runs/${f.runId}/nodes/${seg}`));
    out.push(post('POST /v1/runs/{id}/nodes/{key}/skip', `/v1/runs/${f.runId}/nodes/${seg}/skip`, '{}'));
    out.push(post('PUT /v1/runs/{id}/edges/{edgeKey}/override', `/v1/runs/${f.runId}/edges/${seg}/override`, '{"verdict":true}', 'PUT'));
    out.push(get('GET /v1/conversations/{id}/messages', `/v1/conversations/${seg}/messages`));
    out.push(get('GET /v1/conversations/{id}/runs', `/v1/conversations/${seg}/runs`));
    // a segment that is not UTF-8 stays as written (a storable id of its own): only NUL is refused there
    if (seg.includes('%00')) out.push(post('POST /v1/conversations/{id}/messages', `/v1/conversations/${seg}/messages`, `{"definitionId":"${f.chatDefId}","text":"t","requestId":"r"}`));
    out.push(get('GET /v1/definitions/{id}', `/v1/definitions/${seg}`));
  }
  for (const n of ['2147483648', '-2147483649', '99999999999999999999', '1e400', '9007199254740993']) {
    out.push(post('PUT /v1/definitions/{id}', `/v1/definitions/${f.defId}`, `{"version":${n}}`, 'PUT'));
    out.push(get('GET /v1/runs/{id}/events', `/v1/runs/${f.runId}/events?afterSeq=${n}`));
    out.push(get('GET /v1/runs/{id}/events', `/v1/runs/${f.runId}/events?limit=${n}`));
    out.push(get('GET /v1/runs', `/v1/runs?limit=${n}`));
    out.push(get('GET /v1/runs/{id}/stream', `/v1/runs/${f.doneRunId}/stream?afterSeq=${n}`));
    out.push(get('GET /v1/runs/{id}/stream', `/v1/runs/${f.doneRunId}/stream`, { 'last-event-id': n }));
  }
  const id = '00000000-0000-4000-8000-000000000000';
  for (const date of ['9999-99-99T99:99:99.999999', '2026-02-30T00:00:00.000000', '0000-01-01T00:00:00.000000', '2026-13-01T00:00:00.000000', '2026-01-01T24:00:00.000000', '2026-01-01T23:59:60.000000']) {
    for (const path of ['/v1/definitions', '/v1/runs', `/v1/conversations/${f.convId}/runs`]) {
      out.push(get(`GET ${path.startsWith('/v1/conversations') ? '/v1/conversations/{id}/runs' : path}`, `${path}?cursor=${cursor(`${date}|${id}`)}`));
    }
  }
  out.push(get('GET /v1/conversations/{id}/messages', `/v1/conversations/${f.convId}/messages?cursor=${cursor('m:9999999999999999')}`));
  // a conversation cursor is read by the same keyset decoder: an instant that is none is a 400 there too
  for (const date of ['2026-02-30T00:00:00.000000', '2026-13-01T00:00:00.000000', '0000-01-01T00:00:00.000000', '2026-01-01T24:00:00.000000']) {
    out.push(get('GET /v1/conversations', `/v1/conversations?cursor=${cursor(`c:${date}|${f.convId}`)}`));
  }
  // numbers written with an exponent that the store could spell out in full: stored as written (2xx) or refused (4xx), never a 5xx
  const anyAnswer = [200, 201, 202, 400, 404, 409];
  for (const n of ['1e131071', '-9.99E+131071', '1e-16383', '1e100000']) {
    out.push({ ...post('POST /v1/definitions/{id}/runs', `/v1/definitions/${f.defId}/runs`, `{"input":{"v":${n},"w":[${n},${n}]}}`), expect: anyAnswer });
    out.push({ ...post('POST /v1/definitions', '/v1/definitions', `{"name":"exp","graph":{"nodes":[{"key":"s","kind":"Start","config":{"defaultInput":{"v":${n}}}},{"key":"e","kind":"End","config":{"outcome":"x"}}],"edges":[{"key":"e1","from":"s","to":"e","condition":{"path":"output.x","op":"Gt","value":${n}}}]}}`), expect: anyAnswer });
    out.push({ ...post('POST /v1/runs/{id}/nodes/{key}/complete', `/v1/runs/${f.runId}/nodes/t3/complete`, `{"output":{"v":${n}}}`), expect: anyAnswer });
    out.push({ ...post('PUT /v1/runs/{id}/nodes/{key}/input', `/v1/runs/${f.runId}/nodes/t2/input`, `{"input":{"v":${n}}}`, 'PUT'), expect: anyAnswer });
    out.push({ ...post('POST /v1/runs/{id}/nodes/{key}/decide', `/v1/runs/${f.runId}/nodes/gate/decide`, `{"operationId":"o-${n}","decision":"Approve","payload":{"v":${n}}}`), expect: anyAnswer });
  }
  // a list filter naming no possible conversation matches no run (200, empty), like a malformed definitionId
  for (const bad of ['%00', 'a%00b']) out.push({ ...get('GET /v1/runs', `/v1/runs?conversationId=${bad}`), expect: [200] });
  return out;
}
