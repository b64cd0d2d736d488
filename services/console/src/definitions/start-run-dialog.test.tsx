// @vitest-environment happy-dom
/**
 * "Start run": the input, the metadata lines and the priority go in one start, under the dialog's
 * request id; a Start with an input schema gets a generated form whose errors sit under their
 * fields and stop the start, with the raw JSON one switch away (checked against the same schema).
 */
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi } from '../test/fake-api';
import { renderApp } from '../test/render';

const DEF = 'dddddddd-0000-4000-8000-000000000002';
const iso = '2026-01-01T00:00:00.000Z';
const graph = { nodes: [{ key: 'start', kind: 'Start', config: { defaultInput: { n: 1 } } }, { key: 'done', kind: 'End', config: { outcome: 'ok' } }], edges: [{ key: 'e1', from: 'start', to: 'done' }] };
const definition = { id: DEF, name: 'tiny', description: '', kind: 'Standard', version: 1, nodeCount: 2, graphHash: 'h', createdAt: iso, updatedAt: iso };

describe('StartRunDialog', () => {
  it('sends metadata and a non-default priority with the input, and refuses a line that is not a pair', async () => {
    const api = fakeApi({
      'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define'], authRequired: false } }),
      'GET /v1/definitions': () => ({ body: { items: [definition], nextCursor: null } }),
      'GET /v1/definitions/*': () => ({ body: { ...definition, graph } }),
      [`POST /v1/definitions/${DEF}/runs`]: () => ({ status: 202, body: { runId: 'aaaaaaaa-0000-4000-8000-000000000009' } }),
      'POST /v1/runs': () => ({ status: 202, body: { runId: 'aaaaaaaa-0000-4000-8000-000000000009' } }),
    });
    renderApp(`/console/definitions?start=${DEF}`, api);
    const d = await screen.findByRole('dialog');
    const meta = await within(d).findByLabelText('Metadata (optional)');
    await userEvent.type(meta, 'customer: acme{Enter}oops');
    expect(within(d).getByText('Line 2 is not key: value')).toBeTruthy();
    expect((within(d).getByRole('button', { name: 'Start run' }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.type(meta, ': 1');
    await userEvent.selectOptions(within(d).getByLabelText('Priority'), '5');
    await userEvent.click(within(d).getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(api.sent.some((s) => s.route.startsWith('POST ') && s.route.includes('runs'))).toBe(true));
    const start = api.sent.find((s) => s.route.startsWith('POST ') && s.route.includes('runs'))!;
    expect(start.body).toMatchObject({ input: { n: 1 }, metadata: { customer: 'acme', oops: '1' }, priority: 5 });
    expect(start.headers.get('idempotency-key')).toBe((start.body as { requestId: string }).requestId);
  });

  it('generates the input form from the schema, shows each field’s error under it, and starts with what the form holds', async () => {
    const schema = {
      type: 'object',
      required: ['customer'],
      properties: { qty: { type: 'integer', title: 'Quantity', minimum: 1 }, customer: { type: 'string', title: 'Customer', minLength: 2 } },
    };
    const schemed = { ...graph, nodes: [{ key: 'start', kind: 'Start', config: { inputSchema: schema } }, graph.nodes[1]] };
    const api = fakeApi({
      'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define'], authRequired: false } }),
      'GET /v1/definitions': () => ({ body: { items: [definition], nextCursor: null } }),
      'GET /v1/definitions/*': () => ({ body: { ...definition, graph: schemed } }),
      [`POST /v1/definitions/${DEF}/runs`]: () => ({ status: 202, body: { runId: 'aaaaaaaa-0000-4000-8000-000000000009' } }),
    });
    renderApp(`/console/definitions?start=${DEF}`, api);
    const d = await screen.findByRole('dialog');
    const customer = await within(d).findByLabelText(/Customer/);
    // the required member first, whatever order the stored document keeps
    expect([...d.querySelectorAll('.schema-form input')].map((i) => i.id.split('_').at(-1))).toEqual(['customer', 'qty']);
    const startButton = within(d).getByRole('button', { name: 'Start run' });
    await userEvent.click(startButton);
    expect(await within(d).findByText('is required')).toBeTruthy();
    expect(api.sent.some((x) => x.route.startsWith('POST '))).toBe(false);
    await userEvent.type(customer, 'a');
    expect(await within(d).findByText('String is too short (1 < 2).')).toBeTruthy();
    await userEvent.type(customer, 'cme');
    await userEvent.type(within(d).getByLabelText(/Quantity/), '0');
    expect(await within(d).findByText('0 is less than 1.')).toBeTruthy();

    // the raw JSON holds what the form holds, and is checked against the same schema
    await userEvent.click(within(d).getByRole('radio', { name: 'JSON' }));
    const text = within(d).getByLabelText('Run input (JSON)') as HTMLTextAreaElement;
    expect(JSON.parse(text.value)).toEqual({ customer: 'acme', qty: 0 });
    expect(within(d).getByRole('list', { name: 'Input problems' }).textContent).toContain('.qty');
    expect((startButton as HTMLButtonElement).disabled).toBe(true);
    await userEvent.clear(text);
    await userEvent.type(text, '{{"customer": "acme", "qty": 2}');
    await userEvent.click(within(d).getByRole('radio', { name: 'Form' }));
    expect(((await within(d).findByLabelText(/Quantity/)) as HTMLInputElement).value).toBe('2');
    await userEvent.click(startButton);
    await waitFor(() => expect(api.sent.some((x) => x.route.startsWith('POST '))).toBe(true));
    expect(api.sent.find((x) => x.route.startsWith('POST '))!.body).toMatchObject({ input: { customer: 'acme', qty: 2 } });
  });
});
