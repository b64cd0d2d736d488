/**
 * docs/guides/agents.md cannot rot: its `bash` blocks (save an agent, use it, update it, a tool
 * call a person approves with edited arguments, the steps it took) run,
 * in order, as one bash script against a whole cluster, and every `text` block — the outputs
 * the page shows — must appear in what they print (./page-commands.ts).
 */
import { describe } from 'vitest';
import { pageCommandsTest } from './page-commands';

describe('the agents guide', () => {
  pageCommandsTest('docs/guides/agents.md', 5);
});
