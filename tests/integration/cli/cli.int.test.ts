import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { main } from '@flowline/cli';
import { KEY, startCluster, type CliCluster } from './cluster';

/** the CLI's package (libs/cli: its bin/) */
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'libs', 'cli');
const NO_RUN = '00000000-0000-4000-8000-000000000000';

/** Start → Tool(`config`) → End, as a user writes it. */
const toolGraph = (tool: Record<string, unknown>, o: { maxAttempts?: number; end?: Record<string, unknown> } = {}) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'tool', kind: 'Tool', config: tool, ...(o.maxAttempts ? { maxAttempts: o.maxAttempts } : {}) },
    { key: 'end', kind: 'End', config: o.end ?? { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'tool' },
    { key: 'e2', from: 'tool', to: 'end' },
  ],
});

const gateGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'ship it?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'yes', kind: 'End', config: { outcome: 'approved' } },
    { key: 'no', kind: 'End', config: { outcome: 'rejected' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'gate' },
    { key: 'e2', from: 'gate', to: 'yes', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
    { key: 'e3', from: 'gate', to: 'no', condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } },
  ],
};

let c: CliCluster;
let files: string;

/** Runs `flowline …argv` in-process, in the files folder, with `env`. */
async function runCli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), cwd: files, env });
  return { code, out: out.join(''), err: err.join('') };
}

/** Runs `flowline --url <cluster> --key <key> …argv` in-process. */
function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCli(['--url', c.url, '--key', KEY, ...argv]);
}

function file(name: string, value: unknown): string {
  writeFileSync(join(files, name), typeof value === 'string' ? value : JSON.stringify(value));
  return name;
}

beforeAll(async () => {
  files = mkdtempSync(join(tmpdir(), 'flowline-cli-'));
  c = await startCluster();
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe('flowline definitions', () => {
  it('validates a valid graph: prints valid and exits 0', async () => {
    const r = await cli('definitions', 'validate', file('valid.json', toolGraph({ toolName: 'echo' })));
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe('valid\n');
  });

  it('validates an invalid graph: prints every error as `key: message` and exits 1', async () => {
    const graph = toolGraph({ toolName: 'no_such_tool' }, { end: { outcome: 'done', colour: 'red' } });
    const r = await cli('definitions', 'validate', file('invalid.json', graph));
    expect(r.code).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe('invalid: 2 errors');
    expect(lines.slice(1).sort()).toEqual([expect.stringMatching(/^end: .*colour/), expect.stringMatching(/^tool: .*no_such_tool/)]);
  });

  it('prints the API document with --json, still exiting 1 for an invalid graph', async () => {
    const r = await cli('--json', 'definitions', 'validate', file('invalid2.json', toolGraph({ toolName: 'no_such_tool' })));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ valid: false, errors: [{ key: 'tool' }] });
  });

  it('refuses to create an invalid graph with the keyed details and exit 1', async () => {
    const r = await cli('definitions', 'create', 'broken', file('invalid3.json', toolGraph({ toolName: 'no_such_tool' })));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^GraphInvalid: .+\n {2}tool: .*no_such_tool/);
    expect(r.out).toBe('');
  });

  it('creates, lists and shows a definition', async () => {
    const created = await cli('definitions', 'create', 'listed', file('listed.json', toolGraph({ toolName: 'echo' })), '--description', 'for the list');
    expect(created.code).toBe(0);
    const id = created.out.trim();
    const list = await cli('definitions', 'list');
    expect(list.code).toBe(0);
    expect(list.out.split('\n')[0]).toMatch(/^ID\s+NAME\s+VERSION\s+KIND\s+NODES\s+UPDATED$/);
    expect(list.out).toMatch(new RegExp(`^${id}\\s+listed\\s+1\\s+Standard\\s+3\\s`, 'm'));
    const got = await cli('definitions', 'get', id);
    expect(got.code).toBe(0);
    expect(got.out).toMatch(/^description\s+for the list$/m);
    expect(got.out).toContain('"toolName": "echo"');
  });

  it('reads a graph held in `graph`: a sample of scripts/samples, or a definition as `--json definitions get` prints it', async () => {
    const sample = join(packageDir, '..', '..', 'scripts', 'samples', 'hello-echo.json');
    expect(await cli('definitions', 'validate', sample)).toMatchObject({ code: 0, out: 'valid\n' });
    const id = (await cli('definitions', 'create', 'sample', sample)).out.trim();
    const copy = await cli('definitions', 'create', 'copy', file('exported.json', (await cli('--json', 'definitions', 'get', id)).out));
    expect(copy.code).toBe(0);
    expect(JSON.parse((await cli('--json', 'definitions', 'get', copy.out.trim())).out).graphHash).toBe(
      JSON.parse((await cli('--json', 'definitions', 'get', id)).out).graphHash,
    );
  });
});

describe('flowline definitions describe and render', () => {
  const routed = {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'route', kind: 'Condition', label: 'Big?', config: { path: 'output.input.n' } },
      { key: 'big', kind: 'End', config: { outcome: 'big' } },
      { key: 'small', kind: 'End', config: { outcome: 'small' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'route' },
      { key: 'huge', from: 'route', to: 'big', condition: { op: 'Gt', value: 9007199254740992 } },
      { key: 'rest', from: 'route', to: 'small', default: true },
    ],
  };

  it("describes and renders a local file with the server's parser, exactly, without the API", async () => {
    writeFileSync(join(files, 'routed.json'), JSON.stringify(routed).replace('9007199254740992', '9007199254740993'));
    // no server at this URL: a local file never reaches the API
    const offline = (...argv: string[]) => runCli(['--url', 'http://127.0.0.1:9', ...argv]);
    const d = await offline('definitions', 'describe', 'routed.json');
    expect(d).toMatchObject({ code: 0, err: '' });
    expect(d.out).toMatch(/^start\s+start$/m);
    expect(d.out).toMatch(/^ends\s+big, small$/m);
    expect(d.out).toMatch(/^route\s+Condition\s+Big\?\s+All\s+1\s+inline\s+1$/m);
    expect(d.out).toMatch(/^huge\s+route\s+big\s+conditional\s+-\s+output\.input\.n Gt 9007199254740993$/m);
    const json = JSON.parse((await offline('definitions', 'describe', 'routed.json', '--format', 'json')).out);
    expect(json.analysis).toMatchObject({ start: 'start', routers: ['route'], nodeCount: 4, edgeCount: 3 });

    const m = await offline('definitions', 'render', 'routed.json');
    expect(m.code).toBe(0);
    expect(m.out.split('\n')[0]).toBe('flowchart LR');
    expect(m.out).toContain('n1 -.->|"default"| n3');
    const dot = await offline('definitions', 'render', 'routed.json', '--format', 'dot');
    expect(dot.out).toMatch(/^digraph /);
    expect(dot.out).toContain('n1 -> n2 [label="output.input.n Gt 9007199254740993"];');
    expect(JSON.parse((await offline('--json', 'definitions', 'render', 'routed.json')).out)).toMatchObject({ format: 'mermaid', version: null });
  });

  it('refuses an invalid local file with every keyed error and exit 1, and a tool the environment does not register', async () => {
    // a Condition with one out-edge, an End without its outcome
    const bad = {
      nodes: [...routed.nodes.slice(0, 3), { key: 'small', kind: 'End' }],
      edges: [...routed.edges.slice(0, 2), { key: 'e2', from: 'start', to: 'small' }],
    };
    for (const cmd of ['describe', 'render']) {
      const r = await runCli(['definitions', cmd, file(`bad-${cmd}.json`, bad)]);
      expect(r.code).toBe(1);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/^GraphInvalid: bad-\w+\.json is not a valid graph: 2 errors\n/);
      expect(r.err).toContain('  route: ');
      expect(r.err).toContain('  small: ');
    }
    const tool = file('test-tool.json', toolGraph({ toolName: 'test_fail' }));
    expect((await runCli(['definitions', 'describe', tool])).err).toMatch(/unknown tool 'test_fail'/);
    expect(await runCli(['definitions', 'describe', tool], { WF_TEST_TOOLS: '1' })).toMatchObject({ code: 0 });
    expect(await runCli(['definitions', 'render', tool], { MAX_NODES_PER_DEFINITION: 'many' })).toMatchObject({ code: 2, err: expect.stringMatching(/MAX_NODES_PER_DEFINITION/) });
    expect(await runCli(['definitions', 'render', 'missing.json'])).toMatchObject({ code: 2, err: expect.stringMatching(/^UsageError: cannot read graph missing\.json/) });
  });

  it('describes and renders a saved definition through the API, and refuses an unknown one', async () => {
    const id = (await cli('definitions', 'create', 'drawn', file('drawn.json', routed))).out.trim();
    const d = await cli('definitions', 'describe', id);
    expect(d.code).toBe(0);
    expect(d.out).toMatch(/^version\s+1$/m);
    expect(d.out).toMatch(/^routers\s+route$/m);
    expect(JSON.parse((await cli('--json', 'definitions', 'describe', id)).out)).toMatchObject({ version: 1, analysis: { ends: ['big', 'small'] } });
    expect((await cli('definitions', 'render', id, '--format', 'dot')).out).toMatch(/^digraph /);
    expect(JSON.parse((await cli('--json', 'definitions', 'render', id)).out)).toMatchObject({ format: 'mermaid', version: 1 });
    const missing = await cli('definitions', 'render', NO_RUN);
    expect(missing).toMatchObject({ code: 1, err: expect.stringMatching(/^NotFound: /) });
    expect((await cli('definitions', 'render', id, '--format', 'png')).code).toBe(2);
  });
});

describe('flowline runs', () => {
  it('creates Start → Tool echo → End, starts it with --wait, follows it live to Completed (exit 0) and shows its nodes', async () => {
    const created = await cli('definitions', 'create', 'echo', file('echo.json', toolGraph({ toolName: 'echo', argumentBindings: { said: 'run.input.say' } })));
    expect(created.code).toBe(0);
    const definitionId = created.out.trim();

    const run = await cli('runs', 'start', definitionId, '--input', '{"say":"hello"}', '--wait');
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const lines = run.out.trimEnd().split('\n');
    const runId = lines[0]!;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    // each event printed as it arrived, then the outcome
    expect(lines).toContainEqual(expect.stringMatching(/\snode\.completed\s+tool(\s|$)/));
    expect(lines).toContainEqual(expect.stringMatching(/\srun\.completed\s+-(\s|$)/));
    expect(lines.at(-2)).toBe(`run ${runId} Completed`);
    expect(JSON.parse(lines.at(-1)!.replace(/^output /, ''))).toMatchObject({ outcome: 'done' });

    const got = await cli('runs', 'get', runId);
    expect(got.code).toBe(0);
    expect(got.out).toMatch(/^status\s+Completed$/m);
    expect(got.out).toMatch(/^KEY\s+KIND\s+STATUS\s+ATTEMPT\s+FAILURECLASS$/m);
    expect(got.out).toMatch(/^start\s+Start\s+Succeeded\s+1\s+None$/m);
    expect(got.out).toMatch(/^tool\s+Tool\s+Succeeded\s+1\s+None$/m);
    expect(got.out).toMatch(/^end\s+End\s+Succeeded\s+1\s+None$/m);

    const tool = JSON.parse((await cli('--json', 'runs', 'get', runId)).out);
    expect(tool.run.status).toBe('Completed');

    const events = await cli('runs', 'events', runId);
    expect(events.code).toBe(0);
    expect(events.out.trimEnd().split('\n').at(-1)).toMatch(/\srun\.completed\s/);

    const listed = await cli('--json', 'runs', 'list', '--status', 'Completed', '--definition', definitionId);
    expect(JSON.parse(listed.out).items.map((r: { id: string }) => r.id)).toEqual([runId]);
  }, 60_000);

  it('exits 1 from --wait when the run fails, naming the failure', async () => {
    const def = (await cli('definitions', 'create', 'fails', file('fails.json', toolGraph({ toolName: 'test_fail', arguments: { untilAttempt: 5 } }, { maxAttempts: 1 })))).out.trim();
    const r = await cli('runs', 'start', def, '--wait');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^run [0-9a-f-]{36} Failed \w+/m);
    expect(r.out).toMatch(/\srun\.failed\s+-(\s|$)/m);
  }, 60_000);

  it('decides a waiting gate and watches the run to Completed', async () => {
    const def = (await cli('definitions', 'create', 'gate', file('gate.json', gateGraph))).out.trim();
    const runId = (await cli('runs', 'start', def, '--request-id', 'gate-1')).out.trim();
    // the same request id is the same run
    expect((await cli('runs', 'start', def, '--request-id', 'gate-1')).out.trim()).toBe(runId);
    await waitFor(async () => JSON.parse((await cli('--json', 'runs', 'get', runId)).out).run.status === 'WaitingForApproval', {
      timeoutMs: 20_000,
      description: 'the gate waits',
    });
    const decided = await cli('decide', runId, 'gate', 'Approve', '--comment', 'ship', '--operation-id', 'op-1');
    expect(decided).toMatchObject({ code: 0, out: 'decided gate: Approve (operation op-1)\n' });

    const watched = await cli('runs', 'watch', runId);
    expect(watched.code).toBe(0);
    expect(watched.out).toMatch(/\sgate\.decided\s+gate\s/);
    expect(watched.out).toMatch(new RegExp(`^run ${runId} Completed$`, 'm'));

    // a different act on the decided gate is refused: `code: message`, exit 1, no stack
    const again = await cli('decide', runId, 'gate', 'Reject', '--operation-id', 'op-2');
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^GateAlreadyDecided: /);
  }, 60_000);

  it('cancels a waiting run; watching it then ends with exit 1 on Cancelled', async () => {
    const def = (await cli('definitions', 'create', 'gate', file('gate2.json', gateGraph))).out.trim();
    const runId = (await cli('runs', 'start', def)).out.trim();
    await waitFor(async () => JSON.parse((await cli('--json', 'runs', 'get', runId)).out).run.status === 'WaitingForApproval', {
      timeoutMs: 20_000,
      description: 'the gate waits',
    });
    expect(await cli('runs', 'cancel', runId)).toMatchObject({ code: 0, out: `cancel requested: ${runId}\n` });
    const watched = await cli('runs', 'watch', runId);
    expect(watched.code).toBe(1);
    expect(watched.out).toMatch(/\srun\.cancelled\s/);
    expect(watched.out).toMatch(new RegExp(`^run ${runId} Cancelled`, 'm'));
  }, 60_000);

  it('starts runs with --metadata, searches them with list flags, and counts and submits a bulk cancel by filter', async () => {
    const def = (await cli('definitions', 'create', 'gate', file('gate4.json', gateGraph))).out.trim();
    const tag = `cli-${Date.now()}`;
    const a = (await cli('runs', 'start', def, '--metadata', `batch=${tag}`, '--metadata', 'team=ops')).out.trim();
    const b = (await cli('runs', 'start', def, '--metadata', `batch=${tag}`)).out.trim();
    const listed = JSON.parse((await cli('--json', 'runs', 'list', '--metadata', `batch=${tag}`, '--metadata', 'team=ops')).out);
    expect(listed.items.map((r: { id: string }) => r.id)).toEqual([a]);
    expect(listed.items[0].metadata).toEqual({ batch: tag, team: 'ops' });
    const both = JSON.parse((await cli('--json', 'runs', 'list', '--metadata', `batch=${tag}`, '--status', 'Pending,Running,WaitingForApproval', '--definition-version', '1')).out);
    expect(both.items.map((r: { id: string }) => r.id).sort()).toEqual([a, b].sort());
    // --q: the start of a run id, and text in a metadata pair
    const byPrefix = JSON.parse((await cli('--json', 'runs', 'list', '--q', a.slice(0, 8))).out);
    expect(byPrefix.items.map((r: { id: string }) => r.id)).toContain(a);
    expect(byPrefix.items.map((r: { id: string }) => r.id)).not.toContain(b);
    const byText = JSON.parse((await cli('--json', 'runs', 'list', '--q', 'team:ops', '--metadata', `batch=${tag}`)).out);
    expect(byText.items.map((r: { id: string }) => r.id)).toEqual([a]);
    const badFlag = await cli('runs', 'list', '--failure-class', 'Oops');
    expect(badFlag.code).toBe(1);
    expect(badFlag.err).toMatch(/^ValidationFailed: /);
    expect(await cli('runs', 'bulk', 'cancel', '--metadata', `batch=${tag}`, '--dry-run')).toMatchObject({ code: 0, out: '2 runs\n' });
    const submitted = JSON.parse((await cli('--json', 'runs', 'bulk', 'cancel', '--metadata', `batch=${tag}`, '--request-id', tag)).out);
    expect(submitted).toEqual({ bulkId: expect.any(String), count: 2 });
    const status = JSON.parse((await cli('--json', 'runs', 'bulk-status', submitted.bulkId)).out);
    expect(status).toMatchObject({ bulkId: submitted.bulkId, action: 'cancel', total: 2 });
    const empty = await cli('runs', 'bulk', 'cancel');
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/^ValidationFailed: /);
    await cli('runs', 'cancel', a);
    await cli('runs', 'cancel', b);
  }, 60_000);

  it('submits a bulk migrate with a canary, shows it paused with its runs, and resumes it to the end', async () => {
    const def = (await cli('definitions', 'create', 'gate', file('gate6.json', gateGraph))).out.trim();
    const tag = `mig-${Date.now()}`;
    const runs = [(await cli('runs', 'start', def, '--metadata', `batch=${tag}`)).out.trim(), (await cli('runs', 'start', def, '--metadata', `batch=${tag}`)).out.trim()];
    for (const id of runs) {
      await waitFor(async () => JSON.parse((await cli('--json', 'runs', 'get', id)).out).run.status === 'WaitingForApproval', { timeoutMs: 20_000, description: 'the gate waits' });
    }
    const saved = await fetch(`${c.url}/v1/definitions/${def}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ graph: gateGraph, version: 1 }),
    });
    expect(saved.status).toBe(200);
    const flags = ['--definition', def, '--metadata', `batch=${tag}`, '--to-version', '2', '--node-map', 'gate=gate', '--canary-percent', '50', '--max-error-rate', '0.5'];
    expect(await cli('runs', 'bulk', 'migrate', ...flags, '--dry-run')).toMatchObject({ code: 0, out: '2 runs\n' });
    const submitted = JSON.parse((await cli('--json', 'runs', 'bulk', 'migrate', ...flags)).out);
    expect(submitted).toEqual({ bulkId: expect.any(String), count: 2 });
    await c.workBulkJob(submitted.bulkId);
    const paused = await cli('runs', 'bulk-status', submitted.bulkId);
    expect(paused.out).toMatch(/paused because\s+canary/);
    const status = JSON.parse((await cli('--json', 'runs', 'bulk-status', submitted.bulkId)).out);
    expect(status).toMatchObject({ action: 'migrate', migrate: { toVersion: 2, nodeMap: { gate: 'gate' }, canaryPercent: 50, maxErrorRate: 0.5 }, done: 1, total: 2 });
    const listed = JSON.parse((await cli('--json', 'runs', 'bulk-runs', submitted.bulkId)).out);
    expect(listed.items).toEqual([expect.objectContaining({ outcome: 'applied', reason: null })]);
    expect(await cli('runs', 'bulk-resume', submitted.bulkId)).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^${submitted.bulkId} Running 1/2\n$`)) });
    await c.workBulkJob(submitted.bulkId);
    expect(JSON.parse((await cli('--json', 'runs', 'bulk-status', submitted.bulkId)).out)).toMatchObject({ status: 'Completed', done: 2, failed: 0 });
    const again = await cli('runs', 'bulk-resume', submitted.bulkId);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^BulkJobNotPaused: /);
    expect((await cli('runs', 'bulk', 'migrate', ...flags.slice(0, 4), '--canary-percent', '100')).code).toBe(2);
    for (const id of runs) await cli('runs', 'cancel', id);
  }, 90_000);

  it('forks a run from a node with an edited input, following the new run; an unknown node is refused with its code', async () => {
    const def = (await cli('definitions', 'create', 'gate', file('gate3.json', gateGraph))).out.trim();
    const runId = (await cli('runs', 'start', def)).out.trim();
    const forked = await cli('--json', 'runs', 'fork', runId, 'start', '--input', '{"forked":true}');
    expect(forked.code).toBe(0);
    const answer = JSON.parse(forked.out);
    expect(answer.forkedFrom).toEqual({ runId, nodeKey: 'start' });
    const detail = JSON.parse((await cli('--json', 'runs', 'get', answer.runId)).out);
    expect(detail.run.forkedFrom).toEqual({ runId, nodeKey: 'start' });
    const refused = await cli('runs', 'fork', runId, 'nope');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^ForkNodeUnknown: /);
    await cli('runs', 'cancel', runId);
    await cli('runs', 'cancel', answer.runId);
  }, 60_000);

  it('sends an event a definition subscribes to, shows what it started, and replays it to one published after', async () => {
    const first = (await cli('definitions', 'create', 'on-order', file('on-order.json', { ...toolGraph({ toolName: 'echo', arguments: {} }), triggers: [{ event: 'cli.order.*' }] }))).out.trim();
    const sent = await cli('events', 'send', 'cli.order.paid', '--data', '{"n":1}', '--id', 'cli-ev-1');
    expect(sent).toMatchObject({ code: 0, out: 'cli-ev-1\n' });
    expect((await cli('events', 'send', 'cli.order.paid', '--id', 'cli-ev-1')).out).toBe('cli-ev-1 (duplicate: sent before)\n');
    const got = await cli('events', 'get', 'cli-ev-1');
    expect(got.out).toMatch(/^cli\.order\.paid cli-ev-1 received \S+ · fan-out done$/m);
    expect(got.out).toMatch(/^on-order\s+matched\s+[0-9a-f-]{36}\s+-$/m);
    const late = (await cli('definitions', 'create', 'late', file('late.json', { ...toolGraph({ toolName: 'echo', arguments: {} }), triggers: [{ event: 'cli.*' }] }))).out.trim();
    const replayed = await cli('events', 'replay', 'cli-ev-1', '--definition', late);
    expect(replayed.out).toMatch(new RegExp(`^${late}\\s+matched\\s+[0-9a-f-]{36}`, 'm'));
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('creates a webhook from a file, lists it, shows its deliveries and replays one', async () => {
    const def = (await cli('definitions', 'create', 'hooked', file('hooked.json', toolGraph({ toolName: 'echo', arguments: {} })))).out.trim();
    const created = await cli('webhooks', 'create', file('hook.json', { slug: 'cli-hook', target: { definitionId: def }, auth: { type: 'bearer' } }));
    expect(created.code).toBe(0);
    const [id, url, secretLine] = created.out.trim().split('\n');
    expect(url).toBe(`${c.url}/hooks/tenantCli/cli-hook`);
    const secret = /^secret (\S+) \(shown once\)$/.exec(secretLine!)![1]!;
    const res = await fetch(url!, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{"x":1}' });
    expect(res.status).toBe(202);
    expect((await cli('webhooks', 'list')).out).toMatch(new RegExp(`^${id}\\s+cli-hook\\s+definition ${def}\\s+bearer`, 'm'));
    const deliveries = await cli('webhooks', 'deliveries', id!);
    const line = deliveries.out.split('\n')[1]!;
    expect(line).toMatch(/\sverified\s+202\s+[0-9a-f-]{36}/);
    const replay = await cli('webhooks', 'replay', id!, line.split(/\s+/)[0]!);
    expect(replay.out).toMatch(/^duplicate [0-9a-f-]{36}\n$/);
    expect((await cli('webhooks', 'delete', id!)).out).toBe(`deleted ${id}\n`);
  });

  it('creates, lists, rotates and revokes a managed API key; the key works until revoked', async () => {
    const created = await cli('api-keys', 'create', '--name', 'cli bot', '--scopes', 'read,run', '--cidr', '127.0.0.0/8');
    expect(created.code).toBe(0);
    const [id, secretLine] = created.out.trim().split('\n');
    const secret = /^secret (fl_tenantCli_\S+) \(shown once\)$/.exec(secretLine!)![1]!;
    const asKey = await runCli(['--url', c.url, '--key', secret, 'tools']);
    expect(asKey.code).toBe(0);
    const listed = (await cli('api-keys', 'list')).out;
    expect(listed).toMatch(new RegExp(`^${id}\\s+cli bot\\s+fl_tenantCli_…${secret.slice(-4)}\\s+read,run\\s+from 127\\.0\\.0\\.0/8`, 'm'));
    expect(listed).not.toContain(secret);
    const rotated = await cli('api-keys', 'rotate', id!, '--grace', '0');
    const next = /^secret (\S+) \(shown once\)$/m.exec(rotated.out)![1]!;
    expect((await runCli(['--url', c.url, '--key', secret, 'tools'])).code).not.toBe(0);
    expect((await runCli(['--url', c.url, '--key', next, 'tools'])).code).toBe(0);
    expect((await cli('api-keys', 'revoke', id!)).out).toBe(`revoked ${id}\n`);
    expect((await runCli(['--url', c.url, '--key', next, 'tools'])).code).not.toBe(0);
    expect((await cli('api-keys', 'list')).out).toMatch(new RegExp(`^${id}.*revoked\\s*$`, 'm'));
  });

  it('lists the tool catalog', async () => {
    const r = await cli('tools');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^NAME\s+ALLOWEDURLS\s+DESCRIPTION$/m);
    expect(r.out).toMatch(/^echo\s+-\s+\S/m);
    expect(r.out).toMatch(/^http_fetch\s+required\s+\S/m);
  });

  it('prints an API refusal as `code: message` on stderr with exit 1 and no stack', async () => {
    const r = await cli('runs', 'get', NO_RUN);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toMatch(/^NotFound: .+\n$/);
    expect(r.err).not.toMatch(/\n\s+at /);

    const err: string[] = [];
    expect(await main(['--url', c.url, '--key', 'wrong', 'runs', 'list'], { stdout: () => undefined, stderr: (t) => err.push(t) })).toBe(1);
    expect(err.join('')).toMatch(/^Unauthorized: [^\n]+\n$/);
  });

  it('refuses to watch a run that does not exist', async () => {
    const r = await cli('runs', 'watch', NO_RUN);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^NotFound: /);
  });
});

describe('flowline schedules and delayed starts', () => {
  it('starts a run with --delay (Scheduled) and moves it with runs reschedule; a moved-past time releases it', async () => {
    const def = (await cli('definitions', 'create', 'later', file('later.json', toolGraph({ toolName: 'echo', arguments: { a: 1 } })))).out.trim();
    const runId = (await cli('runs', 'start', def, '--delay', 'PT1H')).out.trim();
    expect(JSON.parse((await cli('--json', 'runs', 'get', runId)).out).run.status).toBe('Scheduled');
    const at = new Date(Date.now() + 3_600_000 * 2).toISOString();
    expect(await cli('runs', 'reschedule', runId, '--start-at', at)).toMatchObject({ code: 0, out: `${runId} not before ${at}\n` });
    expect((await cli('runs', 'reschedule', runId, '--start-at', '2020-01-01T00:00:00Z')).code).toBe(0);
    await waitFor(async () => JSON.parse((await cli('--json', 'runs', 'get', runId)).out).run.status === 'Completed', { timeoutMs: 20_000, description: 'released and completed' });
    const refused = await cli('runs', 'reschedule', runId, '--delay', 'PT1M');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^RunStateConflict: /);
  }, 60_000);

  it('applies a schedule from a file (an upsert by key), lists, shows, previews, triggers, pauses, resumes, reads the ledger and deletes it', async () => {
    const def = (await cli('definitions', 'create', 'nightly', file('nightly.json', toolGraph({ toolName: 'echo', arguments: { a: 1 } })))).out.trim();
    const body = { key: 'cli-nightly', definitionId: def, spec: { cron: '30 2 * * *', timezone: 'America/New_York' } };
    const id = (await cli('schedules', 'apply', file('schedule.json', body))).out.trim();
    expect((await cli('schedules', 'apply', file('schedule2.json', { ...body, policy: { overlap: 'allowAll' } }))).out.trim()).toBe(id);
    const list = await cli('schedules', 'list');
    expect(list.out.split('\n')[0]).toMatch(/^ID\s+KEY\s+SPEC\s+TIMEZONE\s+PAUSED\s+NEXT$/);
    expect(list.out).toContain('cli-nightly');
    expect((await cli('schedules', 'get', id)).out).toMatch(/overlap.*allowAll/s);
    const preview = (await cli('schedules', 'preview', id, '--count', '2')).out.trimEnd().split('\n');
    expect(preview).toHaveLength(2);
    for (const line of preview) expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T(02:30|03:00):00-0[45]:00 {2}\S+Z$/);
    const runId = (await cli('schedules', 'trigger', id)).out.trim();
    expect((await cli('schedules', 'slots', id)).out).toMatch(new RegExp(`trigger\\s+started\\s+${runId}`));
    expect((await cli('schedules', 'pause', id, '--reason', 'freeze')).out).toBe(`${id} paused\n`);
    expect((await cli('schedules', 'resume', id)).out).toMatch(new RegExp(`^${id} resumed; next `));
    const bad = await cli('schedules', 'apply', file('bad.json', { ...body, spec: { cron: 'nope' } }));
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^ValidationFailed: /);
    expect(await cli('schedules', 'delete', id)).toMatchObject({ code: 0, out: `deleted ${id}\n` });
  }, 60_000);
});

describe('flowline usage', () => {
  it('exits 2 on usage mistakes: an unknown command, a bad option value, an unreadable or non-JSON file', async () => {
    const unknown = await cli('runz', 'list');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^UsageError: unknown command 'runz'/);
    const limit = await cli('runs', 'list', '--limit', 'zero');
    expect(limit.code).toBe(2);
    expect(limit.err).toMatch(/positive integer/);
    const missing = await cli('definitions', 'validate', 'nope.json');
    expect(missing).toMatchObject({ code: 2, err: 'UsageError: cannot read graph nope.json: ENOENT\n' });
    const notJson = await cli('definitions', 'validate', file('garbage.json', '{nodes'));
    expect(notJson.code).toBe(2);
    expect(notJson.err).toMatch(/^UsageError: graph garbage.json is not JSON/);
    const input = await cli('runs', 'start', NO_RUN, '--input', '{bad');
    expect(input.code).toBe(2);
    expect(input.err).toMatch(/^UsageError: --input is not JSON/);
  });

  it('prints help with exit 0 and reports an unreachable API as ConnectionFailed with exit 1', async () => {
    const out: string[] = [];
    expect(await main(['--help'], { stdout: (t) => out.push(t), stderr: () => undefined })).toBe(0);
    expect(out.join('')).toMatch(/definitions[\s\S]*runs[\s\S]*decide[\s\S]*tools/);
    // a port that was free a moment ago: nothing listens there
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((r) => probe.close(r));
    const err: string[] = [];
    expect(await main(['--url', url, 'tools'], { stdout: () => undefined, stderr: (t) => err.push(t) })).toBe(1);
    expect(err.join('')).toBe(`ConnectionFailed: cannot reach ${url} (ECONNREFUSED)\n`);
  });

  it('runs as the real `flowline` executable (key from FLOWLINE_API_KEY), whose process ends once a watched run is terminal', async () => {
    const def = (await cli('definitions', 'create', 'bin', file('bin.json', toolGraph({ toolName: 'echo' })))).out.trim();
    const runId = (await cli('runs', 'start', def, '--wait')).out.split('\n')[0]!;
    const { stdout } = await promisify(execFile)(process.execPath, [join(packageDir, 'bin', 'flowline.js'), '--url', c.url, 'runs', 'watch', runId], {
      env: { ...process.env, FLOWLINE_API_KEY: KEY },
      timeout: 30_000,
    });
    expect(stdout).toMatch(/\srun\.completed\s/);
    expect(stdout).toMatch(new RegExp(`^run ${runId} Completed$`, 'm'));
  }, 40_000);
});
