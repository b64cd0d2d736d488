/**
 * docs/tutorial.md cannot rot: its `bash` blocks run, in order, as one bash script against
 * a whole cluster, and every `text` block — the outputs the page shows — must appear in what
 * they print (./page-commands.ts). The LLM worker's scripted provider writes the summary of
 * the five searches.
 */
import { describe } from 'vitest';
import { pageCommandsTest } from './page-commands';

describe('the tutorial', () => {
  pageCommandsTest('docs/tutorial.md', 5);
});
