/**
 * Run state in the console, in real headless Chromium against a real cluster: a graph whose
 * Start writes the topic and two echo Tools append findings runs to its end; the run view's
 * State tab shows the final state, and picking an earlier change shows the state as of it and
 * the keys that node changed. The editor's graph State panel (a key with its reducer), a
 * node's Writes rows, completion of `{{ state.` in a prompt, a save, and the server's keyed
 * error about a bad template drawn on the prompt field. axe-core finds no serious or critical
 * violation on either. Screenshots go to /tmp/cstate-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { consoleSession, seriousViolations } from './console-cluster';

const shot = (page: Page, name: string) => page.screenshot({ path: `/tmp/cstate-${name}.png`, fullPage: true });

/** Start writes topic; s1 then s2 each append one finding that names the topic; End returns the state. */
const gatherGraph = {
  state: { reducers: { findings: 'append' }, initial: { findings: [] } },
  nodes: [
    { key: 'start', kind: 'Start', writes: { topic: 'output.input.topic' } },
    { key: 's1', kind: 'Tool', config: { toolName: 'echo', arguments: { finding: 'first on {{ state.topic }}' } }, writes: { findings: 'output.result.finding' } },
    { key: 's2', kind: 'Tool', config: { toolName: 'echo', arguments: { finding: 'second on {{ state.topic }}' } }, writes: { findings: 'output.result.finding' } },
    { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'state' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 's1' },
    { key: 'e2', from: 's1', to: 's2' },
    { key: 'e3', from: 's2', to: 'end' },
  ],
};

describe('run state in the console', () => {
  const s = consoleSession({ setup: async ({ page }) => page.setDefaultTimeout(20_000) });

  it('shows the final state, and for an earlier change the state as of it and what its node changed', async () => {
    const definitionId = (await s.c.admin.definitions.create({ name: 'gather', description: 'Start writes topic, two echoes append findings', graph: gatherGraph })).id;
    const { runId } = await s.c.admin.runs.start(definitionId, { input: { topic: 'owls' } });
    await s.page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&tab=state`);
    await s.page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    const final = { findings: ['first on owls', 'second on owls'], topic: 'owls' };
    expect((await s.c.admin.runs.state(runId)).state).toEqual(final);
    // the state now, as the page shows it (every change listed: three writers)
    const changes = s.page.locator('.state-update');
    await expect.poll(() => changes.count(), { timeout: 15_000 }).toBe(3);
    await expect.poll(() => s.page.locator('.state-now').innerText(), { timeout: 10_000 }).toContain('second on owls');
    expect(await changes.allInnerTexts()).toEqual([expect.stringMatching(/^#\d+ start topic$/), expect.stringMatching(/^#\d+ s1 findings$/), expect.stringMatching(/^#\d+ s2 findings$/)]);
    await shot(s.page, 'state-now');
    expect(await seriousViolations(s.page)).toEqual([]);

    // s1's change: findings [] → ["first on owls"], and the state as of it lacks the second finding
    await changes.nth(1).click();
    const at = s.page.locator('.state-at');
    await at.waitFor();
    const s1Seq = Number(await changes.nth(1).getAttribute('data-state-seq'));
    expect(await at.getAttribute('data-state-at')).toBe(String(s1Seq));
    expect(new URL(s.page.url()).searchParams.get('stateSeq')).toBe(String(s1Seq));
    const row = s.page.locator('.state-diff tr[data-state-key="findings"]');
    expect(await row.getAttribute('data-change')).toBe('changed');
    expect((await row.locator('td').allInnerTexts()).slice(1)).toEqual(['[]', '["first on owls"]']);
    expect(await s.page.locator('.state-diff tbody tr').count()).toBe(1);
    const asOf = await at.locator('.json-doc').innerText();
    expect(asOf).toContain('first on owls');
    expect(asOf).not.toContain('second on owls');
    expect((await s.c.admin.runs.state(runId, { atSeq: s1Seq })).state).toEqual({ findings: ['first on owls'], topic: 'owls' });
    await shot(s.page, 'state-at-s1');
    expect(await seriousViolations(s.page)).toEqual([]);

    // Start's change adds topic; the choice survives a reload
    await changes.nth(0).click();
    await s.page.locator('.state-diff tr[data-state-key="topic"][data-change="added"]').waitFor();
    await s.page.reload();
    await s.page.locator('.state-diff tr[data-state-key="topic"][data-change="added"]').waitFor();
  });

  it('says plainly when the run’s graph keeps no state', async () => {
    const plain = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'end' }],
    };
    const definitionId = (await s.c.admin.definitions.create({ name: 'plain', description: 'no state', graph: plain })).id;
    const { runId } = await s.c.admin.runs.start(definitionId, { input: {} });
    await s.page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&tab=state`);
    await s.page.getByText('This graph keeps no run state').waitFor();
  });

  it('edits the graph’s state and a node’s writes, completes {{ state. in a prompt, saves, and draws a bad template’s error on the prompt', async () => {
    const graph = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'sum', kind: 'LlmCall', config: { prompt: 'Summarise.' } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'sum' },
        { key: 'e2', from: 'sum', to: 'end' },
      ],
    };
    const id = (await s.c.admin.definitions.create({ name: 'summary', description: 'state from the editor', graph })).id;
    await s.page.goto(`${s.c.baseUrl}/console/editor?definitionId=${id}`);
    const node = (key: string) => s.page.locator(`.react-flow__node[data-id="${key}"]`);
    await node('sum').waitFor();

    // the toolbar's State button opens the graph's State section: a key with its reducer
    await s.page.getByRole('toolbar', { name: 'Editor actions' }).getByRole('button', { name: 'State', exact: true }).click();
    const section = s.page.locator('#graph-state');
    await section.waitFor();
    await section.getByLabel('New state key', { exact: true }).fill('findings');
    await section.getByLabel('Reducer of the new state key').selectOption('append');
    await section.getByRole('button', { name: 'Add key' }).click();
    expect(await section.getByLabel('Reducer of findings').inputValue()).toBe('append');
    await s.page.locator('.validation-strip[data-state="valid"]').waitFor();
    await shot(s.page, 'editor-state-panel');
    expect(await seriousViolations(s.page)).toEqual([]);

    // Start writes the run input's topic
    await node('start').click();
    const writes = s.page.locator('[data-testid="member-writes"]');
    await writes.getByLabel('New writes name', { exact: true }).fill('topic');
    await writes.getByLabel('New writes path', { exact: true }).fill('output.input.topic');
    await writes.getByRole('button', { name: 'Add' }).click();
    expect(await writes.getByLabel('writes path of topic').inputValue()).toBe('output.input.topic');

    // the prompt offers the declared and written state keys after {{ state.
    await node('sum').click();
    const prompt = s.page.locator('[data-testid="member-prompt"] .cm-content');
    await prompt.click();
    await s.page.keyboard.press('Control+End');
    await s.page.keyboard.type(' Topic: {{ state.');
    const offered = s.page.locator('.cm-tooltip-autocomplete [role="option"]');
    await expect.poll(() => offered.allInnerTexts()).toEqual(['findings', 'topic']);
    await shot(s.page, 'editor-completion');
    expect(await seriousViolations(s.page)).toEqual([]);
    await s.page.keyboard.press('ArrowDown');
    await s.page.keyboard.press('Enter');
    await s.page.keyboard.type(' }}');
    await expect.poll(() => prompt.innerText()).toContain('{{ state.topic }}');
    await s.page.locator('.validation-strip[data-state="valid"]').waitFor();
    await s.page.getByRole('button', { name: 'Save', exact: true }).click();
    await s.page.getByTestId('editor-status').getByText('v2 · saved').waitFor();
    const saved = (await s.c.admin.definitions.get(id)).graph as { state?: unknown; nodes: Array<{ key: string; writes?: unknown; config?: { prompt?: string } }> };
    expect(saved.state).toEqual({ reducers: { findings: 'append' } });
    expect(saved.nodes.find((n) => n.key === 'start')!.writes).toEqual({ topic: 'output.input.topic' });
    expect(saved.nodes.find((n) => n.key === 'sum')!.config!.prompt).toBe('Summarise. Topic: {{ state.topic }}');

    // a template naming a root that is not one: the server's keyed error sits on the prompt
    await prompt.click();
    await s.page.keyboard.press('Control+A');
    await s.page.keyboard.insertText('Summarise {{ inputs.text }}');
    const error = s.page.locator('[data-testid="member-prompt"] .field-error');
    await expect.poll(() => error.allInnerTexts(), { timeout: 10_000 }).toEqual([expect.stringContaining("nodes.sum.config.prompt: template refers to 'inputs'")]);
    expect(await s.page.locator('[data-testid="member-prompt"]').getAttribute('data-invalid')).toBe('true');
    await shot(s.page, 'editor-template-error');
    expect(await seriousViolations(s.page)).toEqual([]);
  });
});
