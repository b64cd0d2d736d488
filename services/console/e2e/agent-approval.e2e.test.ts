/**
 * An Agent's tool call a person approves, decided in the console, in real headless Chromium
 * against a whole cluster (API, dispatcher, LLM worker) with a fake OpenAI-compatible provider
 * scripting the model's tool calls and `@modelcontextprotocol/server-memory` (over stdio, the
 * deployment's MCP server) as the tool, whose memory file shows what ran.
 *
 * The Agent's third tool call (`mcp:memory/delete_entities`) needs approval: the run parks,
 * the decision panel shows the tool and its arguments; arguments the tool's schema refuses are
 * a 400 drawn on the field (the gate stays open); edited arguments that fit are approved by
 * keyboard and the run completes having run the edited call; the node document then lists the
 * Agent's steps. A second run is rejected with a comment in the console and completes, the
 * model having been handed the refusal. A read-only key sees the call and no way to decide.
 * axe-core: no serious or critical violation. Screenshots: artifacts/agent-approval-*.png.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { MEMORY_TOOL_CALLS, memoryAgentWithApproval, startFakeLlm, type FakeLlmRequest, type FakeLlmServer, type FakeReply } from '@flowline/testing';
import { KEYS, closeAfterFile, openConsolePage, screenshot, seriousViolations, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

const require = createRequire(import.meta.url);
const memoryEntry = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

const toolMessages = (req: FakeLlmRequest) => (req.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
const create = (id: string, name: string): FakeReply => ({ toolCalls: [{ id, name: MEMORY_TOOL_CALLS.create, arguments: { entities: [{ name, entityType: 'note', observations: [] }] } }] });
/** create, create, then a delete that needs approval, then the final answer */
const script = (prefix: string, final: string) => (n: number): FakeReply =>
  n === 0 ? create('c1', `${prefix}-1`) : n === 1 ? create('c2', `${prefix}-2`) : n === 2 ? { toolCalls: [{ id: 'c3', name: MEMORY_TOOL_CALLS.delete, arguments: { entityNames: [`${prefix}-1`] } }] } : { content: final };

/** Replaces the text of the CodeMirror field `editor` as a person would: select all, type. */
async function typeInto(page: Page, editor: ReturnType<Page['locator']>, text: string): Promise<void> {
  await editor.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

describe('an Agent’s tool call approved and rejected in the console', () => {
  let c: ConsoleCluster;
  let llm: FakeLlmServer;
  let browser: Browser;
  let page: Page;
  let memoryFile: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowline-console-agent-'));
    memoryFile = join(dir, 'memory.jsonl');
    const stdioFile = join(dir, 'mcp-stdio.json');
    writeFileSync(stdioFile, JSON.stringify({ servers: { memory: { command: process.execPath, args: [memoryEntry], env: { MEMORY_FILE_PATH: memoryFile } } } }));
    const scripts: Record<string, (n: number) => FakeReply> = { 'm-approve': script('approve', 'tidied'), 'm-reject': script('reject', 'left as is') };
    llm = await startFakeLlm({ handler: (req) => scripts[String(req.body.model)]?.(toolMessages(req).length) ?? { content: 'unscripted' } });
    c = await startConsoleCluster({
      llmWorkers: 1,
      env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0', MCP_STDIO_SERVERS_FILE: stdioFile },
    });
    ({ browser, page } = await openConsolePage());
    await signIn(page, c.baseUrl, KEYS.admin);
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));
  afterAll(async () => {
    await llm?.close();
  });

  /** Entity names the memory server holds. */
  function entities(): Set<string> {
    const out = new Set<string>();
    if (!existsSync(memoryFile)) return out;
    for (const line of readFileSync(memoryFile, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const e = JSON.parse(line) as { type: string; name?: string };
      if (e.type === 'entity' && e.name) out.add(e.name);
    }
    return out;
  }

  const agentOf = async (runId: string) => (await c.admin.runs.get(runId)).nodeRuns.find((n) => n.nodeKey === 'agent');
  const completed = (runId: string) => expect.poll(async () => (await c.admin.runs.get(runId)).run.status, { timeout: 60_000 }).toBe('Completed');

  async function parkedRun(name: string, model: string): Promise<string> {
    const def = await c.admin.definitions.create({ name, graph: memoryAgentWithApproval(model) });
    const { runId } = await c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await agentOf(runId))?.status, { timeout: 60_000 }).toBe('WaitingForApproval');
    return runId;
  }

  it('shows the parked tool call, draws a schema refusal on the field, and runs the call with the arguments edited in the console', async () => {
    const runId = await parkedRun('approve', 'm-approve');
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}&nodeKey=agent`);
    // the panel as it reads once the node's pending call is in (it shows a loading line before)
    const panel = page.getByRole('region', { name: 'Tool call approval' }).and(page.locator('[data-tool-call="mcp:memory/delete_entities"]'));
    await panel.waitFor({ timeout: 30_000 });
    await panel.getByText('The agent asks to run').waitFor();
    // the arguments the model asked for, read whole
    expect(await panel.locator('.json-doc').first().innerText()).toContain('approve-1');
    // the tool's input schema, folded, says what edited arguments must look like
    await panel.getByText('The tool’s input schema', { exact: true }).click();
    expect(await panel.locator('.json-doc').nth(1).innerText()).toContain('entityNames');
    const editor = panel.getByTestId('tool-call-arguments');
    await editor.locator('.cm-content').waitFor();
    expect(await editor.locator('.cm-content').innerText()).toContain('"approve-1"');
    const withEdited = panel.getByRole('button', { name: 'Approve with edited arguments' });
    // nothing edited yet: approving "with edited arguments" would only repeat the ask
    expect(await withEdited.isDisabled()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agent-approval-waiting');

    // not JSON: the button stays off, the field says why
    await typeInto(page, editor, '{"entityNames": [');
    await editor.getByText(/Not JSON/).waitFor();
    expect(await withEdited.isDisabled()).toBe(true);

    // JSON the tool's schema refuses: the API's 400 is on the field and the gate stays open
    await typeInto(page, editor, '{"entityNames": "approve-2"}');
    expect(await withEdited.isDisabled()).toBe(false);
    await withEdited.click();
    await expect.poll(() => editor.getAttribute('data-invalid'), { timeout: 10_000 }).toBe('true');
    expect(await editor.locator('.field-error').first().innerText()).toMatch(/array/i);
    await panel.getByText('The edited arguments were refused').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agent-approval-refused');
    expect(await c.admin.runs.node(runId, 'agent')).toMatchObject({ status: 'WaitingForApproval', pendingDecisionKind: 'ToolCall' });

    // edited arguments that fit, approved from the keyboard: Tab from the editor to the button, Enter
    await typeInto(page, editor, '{"entityNames": ["approve-2"]}');
    await expect.poll(() => editor.getAttribute('data-invalid')).toBe(null);
    // the editor's Tab leaves it (no tab insertion): comment, Approve, then the edited approval
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Approve with edited arguments');
    await page.keyboard.press('Enter');
    await page.locator('.graph-node[data-node-key="agent"][data-status="Succeeded"]').waitFor({ timeout: 60_000 });
    await completed(runId);
    expect((await agentOf(runId))?.status).toBe('Succeeded');
    // the edited call ran: approve-2 is gone, approve-1 (what the model asked to delete) stays
    const left = entities();
    expect(left.has('approve-1')).toBe(true);
    expect(left.has('approve-2')).toBe(false);

    // the node document lists the steps: model turns, tool calls with their arguments, the approval
    const steps = page.getByRole('list', { name: 'Agent steps' });
    await steps.waitFor({ timeout: 15_000 });
    expect(await steps.locator('li').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-step-kind')))).toEqual([
      'model',
      'tool',
      'model',
      'tool',
      'model',
      'approval',
      'approval',
      'tool',
      'model',
    ]);
    const approvals = await steps.locator('li[data-step-kind="approval"]').allInnerTexts();
    expect(approvals[0]).toContain('approval asked');
    expect(approvals[1]).toContain('approved by a person');
    // the third tool call's arguments are the edited ones; a call's arguments unfold on demand
    const third = steps.locator('li[data-step-kind="tool"]').nth(2);
    expect(await third.innerText()).toContain('mcp:memory/delete_entities');
    await third.getByText('Arguments').click();
    await third.getByText('approve-2').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agent-approval-steps');
  }, 180_000);

  it('rejects a tool call with a comment in the console: the model is handed the refusal and the run completes', async () => {
    const runId = await parkedRun('reject', 'm-reject');
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}&nodeKey=agent`);
    const panel = page.getByRole('region', { name: 'Tool call approval' });
    await panel.waitFor({ timeout: 30_000 });
    await panel.getByLabel(/Comment/).fill('keep it');
    await panel.getByRole('button', { name: 'Reject' }).click();
    await completed(runId);
    expect((await agentOf(runId))?.status).toBe('Succeeded');
    expect(entities().has('reject-1')).toBe(true);
    const last = llm.requests.filter((r) => r.body.model === 'm-reject' && !r.aborted).at(-1)!;
    expect(toolMessages(last).at(-1)?.content).toBe('error: a person rejected this tool call: keep it');
    const steps = page.getByRole('list', { name: 'Agent steps' });
    await steps.locator('li[data-step-kind="approval"]', { hasText: 'rejected by a person' }).waitFor({ timeout: 30_000 });
    // the rejected call did not run: its step says so, with the reason the model was given
    const refused = steps.locator('li[data-step-kind="tool"]').nth(2);
    expect(await refused.innerText()).toMatch(/mcp:memory\/delete_entities\s+not run[\s\S]*rejected by a person/);
    await refused.scrollIntoViewIfNeeded();
    await screenshot(page, 'agent-approval-rejected');
  }, 120_000);

  it('shows a read-only key the parked call and no way to decide it', async () => {
    const runId = await parkedRun('read-only', 'm-approve');
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    try {
      const reader = await ctx.newPage();
      await signIn(reader, c.baseUrl, KEYS.read);
      // the approvals inbox names the tool the call waits on
      await reader.goto(`${c.baseUrl}/console/approvals`);
      const item = reader.locator(`tr[data-approval-run="${runId}"]`);
      await item.waitFor({ timeout: 20_000 });
      expect(await item.getAttribute('data-decision-kind')).toBe('ToolCall');
      expect(await item.innerText()).toContain('a tool call approval');
      expect(await item.innerText()).toContain('mcp:memory/delete_entities');
      expect(await seriousViolations(reader)).toEqual([]);
      await screenshot(reader, 'approvals-tool-call');
      await reader.goto(`${c.baseUrl}/console/run?runId=${runId}&nodeKey=agent`);
      const panel = reader.getByRole('region', { name: 'Tool call approval' });
      await panel.getByText('This key cannot decide (it lacks the run scope).').waitFor({ timeout: 30_000 });
      expect(await panel.getByRole('button').filter({ hasText: /Approve|Reject/ }).count()).toBe(0);
      expect(await panel.innerText()).toContain('mcp:memory/delete_entities');
      expect(await seriousViolations(reader)).toEqual([]);
    } finally {
      await ctx.close();
    }
    await c.admin.runs.decide(runId, 'agent', { operationId: crypto.randomUUID(), decision: 'Approve' });
  }, 120_000);
});
