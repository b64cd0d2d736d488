/**
 * CONTRACT §1.2 at the REST boundary: stored documents holding numbers a double cannot
 * hold are answered digit for digit by the run and node reads. Answers are checked on
 * their raw text (a JS client's JSON.parse would round them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonNumber, parseJsonExact } from '@flowline/graph';
import { createDefinition, lineGraph, startHarness, type Harness } from './harness';

const BIG = '9007199254740993';
const DEC = '0.1000000000000000055511151231257827';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('REST reads of documents with exact numbers', () => {
  it('answers the run output and the node input and output documents digit for digit', async () => {
    const defId = await createDefinition(h, lineGraph(), 'exact-read');
    const started = await h.call('POST', `/v1/definitions/${defId}/runs`, { raw: `{"input":{"big":${BIG}}}` });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;

    // the documents as stored (jsonb keeps the digits, as numeric)
    const big = new JsonNumber(BIG);
    const inputText = `{"run":{"input":{"big":${BIG}}},"upstream":{},"input":{"status":"succeeded","attempt":1,"branch":null,"output":{"input":{"big":${BIG}}}}}`;
    const resultText = `{"outcome":"done","result":{"big":${BIG},"dec":${DEC}}}`;
    const outputText = `{"status":"succeeded","attempt":1,"branch":null,"output":${resultText}}`;
    await h.db.pool.query(`UPDATE runs SET status = 'Completed', output = $2::jsonb WHERE id = $1`, [runId, resultText]);
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded', attempt = 1, input = $2::jsonb, output = $3::jsonb WHERE run_id = $1 AND node_key = 'end'`, [
      runId,
      inputText,
      outputText,
    ]);

    const run = await h.call('GET', `/v1/runs/${runId}`);
    expect(run.status).toBe(200);
    const runText = await run.res.text();
    expect(runText).toContain(`"result":{"big":${BIG},"dec":${DEC}}`);
    expect(parseJsonExact(runText)).toMatchObject({ output: { result: { big, dec: new JsonNumber(DEC) } } });

    const node = await h.call('GET', `/v1/runs/${runId}/nodes/end`);
    expect(node.status).toBe(200);
    const doc = parseJsonExact(await node.res.text()) as { input: unknown; output: unknown };
    expect(doc.input).toEqual(parseJsonExact(inputText));
    expect(doc.output).toEqual(parseJsonExact(outputText));
  });
});
