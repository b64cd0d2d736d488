import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUN_STATUSES } from '../model';
import { NODE_EVENTS, NODE_TRANSITIONS, OPERATOR_VERBS, RUN_EVENTS, RUN_TRANSITIONS, VERB_RULES, type VerbRule } from './index';

const DOC = readFileSync(new URL('../../../../docs/state-machines.md', import.meta.url), 'utf8');

/** The `A --> B : event` lines of the mermaid block marked `%% machine: <name>`. */
function diagram(name: string): { edges: string[]; initial: string[] } {
  const blocks = [...DOC.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const block = blocks.filter((b) => b.includes(`%% machine: ${name}`));
  expect(block).toHaveLength(1);
  const lines = (block[0] ?? '').split('\n').map((l) => l.trim());
  expect(lines[0]).toBe('stateDiagram-v2');
  const edges: string[] = [];
  const initial: string[] = [];
  for (const line of lines.slice(1)) {
    if (line === '' || line.startsWith('%%')) continue;
    const start = /^\[\*\] --> (\w+)$/.exec(line);
    if (start) {
      initial.push(start[1] as string);
      continue;
    }
    if (/^\w+ --> \[\*\]$/.test(line)) continue;
    const m = /^(\w+) --> (\w+) : (\w+)$/.exec(line);
    if (!m) throw new Error(`unparsed diagram line: ${line}`);
    edges.push(`${m[1]} --> ${m[2]} : ${m[3]}`);
  }
  return { edges, initial };
}

function tableEdges(events: readonly string[], table: Record<string, Record<string, string>>): string[] {
  return events.flatMap((e) => Object.entries(table[e] ?? {}).map(([from, to]) => `${from} --> ${to} : ${e}`));
}

describe('docs/state-machines.md', () => {
  it('draws exactly the node-run transition table, starting at Pending', () => {
    const d = diagram('node');
    expect(new Set(d.edges).size).toBe(d.edges.length);
    expect([...d.edges].sort()).toEqual(tableEdges(NODE_EVENTS, NODE_TRANSITIONS).sort());
    expect(d.initial).toEqual(['Pending']);
  });

  it('draws exactly the run transition table, starting at Pending or (a delayed start) Scheduled', () => {
    const d = diagram('run');
    expect(new Set(d.edges).size).toBe(d.edges.length);
    expect([...d.edges].sort()).toEqual(tableEdges(RUN_EVENTS, RUN_TRANSITIONS).sort());
    expect(d.initial).toEqual(['Pending', 'Scheduled']);
  });

  it('documents every event of both machines in an events table', () => {
    for (const e of [...NODE_EVENTS, ...RUN_EVENTS]) expect(DOC).toContain(`| \`${e}\` |`);
  });
});

/** The rows of the operator verb table as docs/state-machines.md writes them. */
function verbRows(): string[] {
  return OPERATOR_VERBS.map((verb) => {
    const rule: VerbRule = VERB_RULES[verb];
    const list = (xs: readonly string[]) => (xs.length === RUN_STATUSES.length ? 'any' : xs.join('/'));
    if (rule.scope === 'run') return `| \`${verb}\` | ${list(rule.runStatuses)} | — | — | — |`;
    const kinds = !rule.kinds ? 'any' : 'only' in rule.kinds ? rule.kinds.only.join('/') : `not ${rule.kinds.except.join('/')}`;
    const also = [rule.heldSucceeded ? 'a held decision (Succeeded)' : null, rule.cancelSurvivor ? 'a survivor of a cancel on a Cancelled run' : null]
      .filter((x) => x !== null)
      .join('; ');
    return `| \`${verb}\` | ${list(rule.runStatuses)} | ${rule.nodeStatuses.join('/')} | ${kinds} | ${also || '—'} |`;
  });
}

describe('docs/state-machines.md, operator verbs', () => {
  it('writes exactly the verb table', () => {
    const at = DOC.indexOf('<!-- verb table: generated from VERB_RULES; docs.test.ts keeps it equal -->');
    expect(at).toBeGreaterThan(-1);
    const rows = DOC.slice(at).split('\n').slice(3).filter((l) => l.startsWith('| `'));
    expect(rows).toEqual(verbRows());
  });
});
