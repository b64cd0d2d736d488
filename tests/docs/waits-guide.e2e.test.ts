/**
 * docs/guides/waits.md cannot rot: its `bash` blocks (a payment callback through a waitpoint
 * token) run, in order, as one bash script against a whole cluster, and every `text` block —
 * the outputs the page shows — must appear in what they print (./page-commands.ts).
 */
import { describe } from 'vitest';
import { pageCommandsTest } from './page-commands';

describe('the waits guide', () => {
  pageCommandsTest('docs/guides/waits.md', 4);
});
