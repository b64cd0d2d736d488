import { describe, expect, it } from 'vitest';
import { NODE_KINDS } from '../model';
import type { Json, JsonObject, NodeKind } from '../model';
import { errorsOf, parse, warningsOf, type Doc } from '../parse/fixtures/builders';
import {
  CHAT_MEMBER_SPECS,
  CONDITION_MEMBER_SPECS,
  EDGE_MEMBER_SPECS,
  GRAPH_MEMBER_SPECS,
  NODE_KIND_GROUPS,
  NODE_KIND_SPECS,
  NODE_MEMBER_SPECS,
  REASONING_EFFORTS,
  RETRY_BACKOFF_MEMBER_SPECS,
  type MemberSpec,
} from '.';

/** start → work (the kind under test) → done; an End under test replaces `done`, a Start `start`. */
function docFor(kind: NodeKind, config: JsonObject): Doc {
  const d: Doc = {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'work', kind, config },
      { key: 'done', kind: 'End', config: { outcome: 'completed' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'work' },
      { key: 'e2', from: 'work', to: 'done' },
    ],
  };
  if (kind === 'Start' || kind === 'End') {
    d.nodes[1] = { key: 'work', kind: 'Parallel' };
    d.nodes[kind === 'Start' ? 0 : 2]!.config = config;
  }
  if (kind === 'Wait') d.signals = { review: {} }; // the channel config.signal's example names
  if (kind === 'Condition') d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { path: 'output', op: 'Exists' } });
  if (kind === 'ChatInput' || Object.keys(config).some((m) => memberOf(kind, m)?.chatOnly === true)) {
    d.kind = 'Chat';
    d.chat = { acceptsAttachments: true };
  }
  return d;
}

const keyOf = (kind: NodeKind) => (kind === 'Start' ? 'start' : kind === 'End' ? 'done' : 'work');
const memberOf = (kind: NodeKind, name: string) => NODE_KIND_SPECS[kind].config.find((m) => m.name === name);

/** A starter config completed so it parses: a Loop, Subworkflow or Map also needs a definition to name. */
function workable(kind: NodeKind): JsonObject {
  const c: JsonObject = { ...NODE_KIND_SPECS[kind].starter };
  if (kind === 'Loop') c.body = 'def-body';
  if (kind === 'Subworkflow' || kind === 'Map') c.definitionId = 'def-child';
  return c;
}

/** A value of the wrong type for a member (null for `json`, which takes any value). */
function wrongValue(m: MemberSpec): Json | undefined {
  const wrong: Record<MemberSpec['type'], Json | undefined> = {
    string: 42, key: 'not a key!', boolean: 'yes', integer: 1.5, number: 'many', enum: 'nope', enumList: ['nope'], stringList: 'x',
    stringOrList: 5, dotPath: 'a..b', bindings: 'x', jsonSchema: 'object', json: undefined, object: [], scalar: { a: 1 },
    condition: 'x', record: 5, joinPolicy: 'Most', position: [1, 2], list: undefined,
  };
  return wrong[m.type];
}

const allMemberLists: Array<[string, readonly MemberSpec[]]> = [
  ['node', NODE_MEMBER_SPECS],
  ['edge', EDGE_MEMBER_SPECS],
  ['condition', CONDITION_MEMBER_SPECS],
  ['graph', GRAPH_MEMBER_SPECS],
  ['chat', CHAT_MEMBER_SPECS],
  ['retryBackoff', RETRY_BACKOFF_MEMBER_SPECS],
  ...NODE_KINDS.map((k) => [`${k} config`, NODE_KIND_SPECS[k].config] as [string, readonly MemberSpec[]]),
];

describe('the member descriptions', () => {
  it('describe every node kind, each in a palette group', () => {
    expect(Object.keys(NODE_KIND_SPECS).sort()).toEqual([...NODE_KINDS].sort());
    for (const k of NODE_KINDS) {
      expect(NODE_KIND_SPECS[k].kind).toBe(k);
      expect(NODE_KIND_GROUPS).toContain(NODE_KIND_SPECS[k].group);
    }
  });

  it.each(allMemberLists)('give every %s member a unique name and a user-facing help sentence', (_, list) => {
    expect(new Set(list.map((m) => m.name)).size).toBe(list.length);
    for (const m of list) {
      expect(m.help, m.name).toMatch(/^[A-Z"{].*[.)]$/s);
      expect(m.help.length, m.name).toBeLessThan(400);
    }
  });

  it('give every kind a summary, an output and a fact that names one of its members', () => {
    for (const k of NODE_KINDS) {
      const s = NODE_KIND_SPECS[k];
      expect(s.summary).toMatch(/\.$/);
      expect(s.output).toMatch(/\.$/);
      if (s.fact !== null) expect([...s.config.map((m) => m.name), 'joinPolicy']).toContain(s.fact);
    }
  });

  it('name the reasoning efforts the parser accepts', () => {
    expect(memberOf('LlmCall', 'reasoningEffort')!.values).toEqual(REASONING_EFFORTS);
    expect(memberOf('Agent', 'reasoningEffort')!.values).toEqual(REASONING_EFFORTS);
  });
});

describe('the parser agrees with the descriptions', () => {
  it.each(NODE_KINDS)('accepts a new %s node with its starter config', (kind) => {
    expect(errorsOf(docFor(kind, workable(kind)))).toEqual([]);
  });

  it.each(NODE_KINDS)('refuses a %s config member the description does not list', (kind) => {
    const errs = errorsOf(docFor(kind, { ...workable(kind), notAMember: 1 }));
    expect(errs).toEqual([{ key: keyOf(kind), message: expect.stringContaining(`config member 'notAMember' is not read by ${kind} nodes`) }]);
  });

  it.each(NODE_KINDS)('requires exactly the %s members described as required', (kind) => {
    for (const m of NODE_KIND_SPECS[kind].config) {
      const config = workable(kind);
      delete config[m.name];
      const missing = errorsOf(docFor(kind, config)).filter((e) => e.message.includes(`config.${m.name} is required`));
      expect(missing.length, `${kind}.${m.name}`).toBe(m.required ? 1 : 0);
    }
  });

  it.each(NODE_KINDS)("accepts each %s member's example and refuses a value of the wrong type", (kind) => {
    for (const m of NODE_KIND_SPECS[kind].config) {
      const base = workable(kind);
      if (kind === 'Tool' && m.name === 'allowedUrls') base.toolName = 'http_fetch';
      if (kind === 'Wait') delete base['for']; // for, until, signal, token, event, any and all are given one at a time
      if (kind === 'Wait' && m.name === 'filter') base['event'] = 'payment.settled'; // a filter reads a signal or an event
      if (m.example !== undefined) {
        expect(errorsOf(docFor(kind, { ...base, [m.name]: m.example })), `${kind}.${m.name} example`).toEqual([]);
      }
      const bad = wrongValue(m);
      if (bad === undefined) continue;
      const errs = errorsOf(docFor(kind, { ...base, [m.name]: bad }));
      expect(errs.some((e) => e.key === keyOf(kind) && e.message.includes(`config.${m.name} `)), `${kind}.${m.name} = ${JSON.stringify(bad)}`).toBe(true);
    }
  });

  it('holds every config number to its described range, bounds included', () => {
    for (const kind of NODE_KINDS) {
      for (const m of NODE_KIND_SPECS[kind].config) {
        if (m.type !== 'integer' && m.type !== 'number') continue;
        const at = (v: number) => errorsOf(docFor(kind, { ...workable(kind), [m.name]: v }));
        const step = m.type === 'integer' ? 1 : 0.001;
        if (m.min !== undefined) {
          expect(at(m.min), `${kind}.${m.name} = min`).toEqual([]);
          expect(at(m.min - step), `${kind}.${m.name} < min`).toHaveLength(1);
        }
        if (m.max !== undefined) {
          expect(at(m.max), `${kind}.${m.name} = max`).toEqual([]);
          expect(at(m.max + step), `${kind}.${m.name} > max`).toHaveLength(1);
        }
      }
    }
  });

  it("fills each kind's maxAttempts default from its description", () => {
    for (const kind of NODE_KINDS) {
      const r = parse(docFor(kind, workable(kind)));
      expect(r.ok, kind).toBe(true);
      if (r.ok) expect(r.graph.nodes.find((n) => n.key === keyOf(kind))!.maxAttempts, kind).toBe(NODE_KIND_SPECS[kind].maxAttempts);
    }
  });

  it('fills the retryBackoff, onError, joinPolicy and chat defaults the descriptions state', () => {
    const r = parse({ ...docFor('LlmCall', workable('LlmCall')), kind: 'Chat', chat: undefined });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const work = r.graph.nodes[1]!;
    const byName = (name: string) => NODE_MEMBER_SPECS.find((m) => m.name === name)!.default;
    expect(work.retryBackoff).toEqual(byName('retryBackoff'));
    expect(Object.fromEntries(RETRY_BACKOFF_MEMBER_SPECS.map((m) => [m.name, m.default]))).toEqual(byName('retryBackoff'));
    expect(work.onError).toBe(byName('onError'));
    expect(work.joinPolicy).toBe(byName('joinPolicy'));
    expect(r.graph.chat).toEqual(Object.fromEntries(CHAT_MEMBER_SPECS.map((m) => [m.name, m.default])));
  });

  it('accepts every described node, edge and graph member without a warning, and refuses any other', () => {
    const d = docFor('LlmCall', workable('LlmCall'));
    const work = d.nodes[1]!;
    for (const m of NODE_MEMBER_SPECS) if (m.example !== undefined && m.name !== 'key' && m.name !== 'kind') work[m.name] = m.example;
    work.joinPolicy = 'All';
    d.edges[0]!.label = 'go';
    d.edges[0]!.sourceHandle = 'out';
    d.schemaVersion = 1;
    d.inputSchema = { type: 'object' };
    d.outputSchema = { type: 'object' };
    expect(errorsOf(d)).toEqual([]);
    expect(warningsOf(d)).toEqual([]);
    work.colour = 'red';
    d.edges[0]!.weight = 2;
    d.theme = 'dark';
    expect(errorsOf(d).map((w) => w.message)).toEqual([
      expect.stringContaining("node member 'colour'"),
      expect.stringContaining("edge member 'weight'"),
      expect.stringContaining("graph member 'theme'"),
    ]);
  });

  it('refuses a wrong value for every described node member', () => {
    for (const m of NODE_MEMBER_SPECS) {
      const bad = wrongValue(m);
      if (bad === undefined || m.name === 'key' || m.name === 'kind') continue;
      const d = docFor('LlmCall', workable('LlmCall'));
      d.nodes[1]![m.name] = bad;
      expect(errorsOf(d).length, `${m.name} = ${JSON.stringify(bad)}`).toBeGreaterThan(0);
    }
  });
});
