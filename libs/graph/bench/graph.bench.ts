/**
 * Micro-benchmarks of the pure core (no assertions): validations/s of the canonical
 * eight-node graph through parseGraph, plan calls/s on a 200-node run mid-flight
 * (Start → 197 parallel Tools → End, half of them settled, results landing), and the
 * exact-number JSON pair (parseJson / stringifyJson, the codec of every document boundary)
 * against native JSON and the exact JS parser and writer, on a ~4 KB and a ~64 KB document.
 * Run: npm run bench -w libs/graph
 */
import {
  applyPlanToSnapshot,
  DEFAULT_CORE_OPTIONS,
  hasExactNumbers,
  JsonNumber,
  parseJson,
  parseJsonExact,
  plan,
  stringifyJson,
  stringifyJsonExact,
  type Graph,
  type GraphEdge,
  type GraphNode,
  type PlanContext,
  type RunSnapshot,
} from '../src/index';
import { parseGraph } from '../src/parse';
import { BUILTIN_TOOLS, canonicalEight } from '../src/parse/fixtures/canonical-eight';
import { edge, graphOf, node, snapshotOf } from '../src/planner/test-kit';

function measure(name: string, fn: () => void, minMs = 1_500): { name: string; perSec: number; usPerOp: number } {
  for (let i = 0; i < 50; i++) fn();
  let ops = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 20; i++) fn();
    ops += 20;
    elapsed = performance.now() - t0;
  }
  return { name, perSec: (ops / elapsed) * 1000, usPerOp: (elapsed * 1000) / ops };
}

function wideFanOut(width: number): Graph {
  const nodes: GraphNode[] = [node('start', 'Start')];
  const edges: GraphEdge[] = [];
  for (let i = 0; i < width; i++) {
    nodes.push(node(`w${i}`, 'Tool'));
    edges.push(edge(`s${i}`, 'start', `w${i}`), edge(`j${i}`, `w${i}`, 'merge'));
  }
  nodes.push(node('merge', 'Join'), node('end', 'End'));
  edges.push(edge('me', 'merge', 'end'));
  return graphOf(nodes, edges);
}

let seq = 0;
const ctx = (now: number): PlanContext => ({ now, options: DEFAULT_CORE_OPTIONS, newId: () => `inv-${++seq}` });

// Mid-run 200-node snapshot: everything queued, half settled, a batch of 20 results landing.
const graph = wideFanOut(197);
let mid: RunSnapshot = applyPlanToSnapshot(snapshotOf(graph), plan(snapshotOf(graph), ctx(1)));
const queued = mid.nodes.filter((n) => n.status === 'Queued');
mid = {
  ...mid,
  results: queued.slice(0, 98).map((n) => ({ invocationId: n.invocationId!, nodeKey: n.nodeKey, outcome: { ok: true, output: { r: n.nodeKey }, startedAt: 2, finishedAt: 3 } })),
};
mid = applyPlanToSnapshot(mid, plan(mid, ctx(4)));
const landing: RunSnapshot = {
  ...mid,
  results: queued.slice(98, 118).map((n) => ({ invocationId: n.invocationId!, nodeKey: n.nodeKey, outcome: { ok: true, output: { r: 1 }, startedAt: 5, finishedAt: 6 } })),
};

/**
 * An input document of `n` upstream envelopes: ids, timestamps, text, small numbers (as nodes
 * produce). `computed`: scores are sums of doubles (0.875 + i/1000), whose shortest texts
 * reach 17 significant digits, so the scan checks each of them against its double.
 */
function inputDocument(n: number, computed = false): Record<string, unknown> {
  const upstream: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    upstream[`step-${i}`] = {
      status: 'succeeded',
      attempt: 1,
      branch: null,
      output: {
        id: `3f2a9c1e-6b7d-4e8f-9a0b-${String(100000000000 + i)}`,
        at: '2024-05-01T12:34:56.789Z',
        text: 'The quick brown fox jumps over the lazy dog, 42 times.',
        score: computed ? 0.875 + i / 1000 : (i % 10) / 8,
        count: i * 17,
        tags: ['alpha', 'beta', i % 2 === 0],
      },
    };
  }
  return { run: { input: { q: 'what is up', limit: 10 } }, upstream, input: null };
}
const smallDoc = inputDocument(13);
const largeDoc = inputDocument(210);
const smallText = JSON.stringify(smallDoc);
const largeText = JSON.stringify(largeDoc);
const computedText = JSON.stringify(inputDocument(210, true));
const exactSmallText = smallText.replace('"limit":10', '"limit":9007199254740993');
const exactSmallDoc = parseJsonExact(exactSmallText);
if (!(((exactSmallDoc as { run: { input: { limit: unknown } } }).run.input.limit) instanceof JsonNumber)) throw new Error('bench doc has no exact number');
const kb = (t: string) => `${(t.length / 1024).toFixed(1)} KB`;

const rows = [
  measure('parseGraph, canonical eight-node graph', () => {
    const r = parseGraph(canonicalEight(), { maxNodes: 200, tools: BUILTIN_TOOLS });
    if (!r.ok) throw new Error('canonical graph refused');
  }),
  measure('plan, 200-node fan-out mid-run, idle tick', () => void plan(mid, ctx(10))),
  measure('plan, 200-node fan-out mid-run, 20 results landing', () => void plan(landing, ctx(10))),
  measure('plan, 200-node fan-out, first tick (queues 197)', () => void plan(snapshotOf(graph), ctx(1))),
  ...[smallText, largeText].flatMap((text) => [
    measure(`JSON.parse, ${kb(text)} document (native baseline)`, () => void JSON.parse(text)),
    measure(`parseJson, ${kb(text)} document without exact numbers (scan + JSON.parse)`, () => void parseJson(text)),
    measure(`parseJsonExact, ${kb(text)} document (JS parser)`, () => void parseJsonExact(text)),
  ]),
  measure(`parseJson, ${kb(exactSmallText)} document holding one exact number (scan + JS parser)`, () => void parseJson(exactSmallText)),
  measure(`JSON.parse, ${kb(computedText)} document of 17-digit doubles (native baseline)`, () => void JSON.parse(computedText)),
  measure(`parseJson, ${kb(computedText)} document of 17-digit doubles (scan + shortest-text check per long token + JSON.parse)`, () => void parseJson(computedText)),
  ...[smallDoc, largeDoc].flatMap((doc) => [
    measure(`JSON.stringify, ${kb(JSON.stringify(doc))} document (native baseline)`, () => void JSON.stringify(doc)),
    measure(`stringifyJson, ${kb(JSON.stringify(doc))} document without exact numbers`, () => void stringifyJson(doc)),
    measure(`stringifyJsonExact, ${kb(JSON.stringify(doc))} document (JS writer)`, () => void stringifyJsonExact(doc)),
    measure(`hasExactNumbers walk, ${kb(JSON.stringify(doc))} document (queue wire check)`, () => void hasExactNumbers(doc)),
  ]),
  measure(`stringifyJson, ${kb(exactSmallText)} document holding one exact number (native, then JS writer)`, () => void stringifyJson(exactSmallDoc)),
];

console.log(`| benchmark | ops/s | µs/op |\n|---|---:|---:|`);
for (const r of rows) console.log(`| ${r.name} | ${Math.round(r.perSec).toLocaleString('en-US')} | ${r.usPerOp.toFixed(1)} |`);
