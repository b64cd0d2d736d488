// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { memberNamed, NODE_KIND_SPECS } from '@flowline/graph';
import { MemberField } from './MemberField';

const ID = '11111111-1111-4111-8111-111111111111';
const pickers = { tools: ['echo'], definitions: [], agents: [{ id: ID, name: 'researcher', latestVersion: 3 }] };

describe("the Agent panel's saved agent picker", () => {
  it('offers the tenant’s saved agents with their latest version and sets agentDefinitionId', async () => {
    const onChange = vi.fn();
    const spec = memberNamed(NODE_KIND_SPECS.Agent.config, 'agentDefinitionId')!;
    render(<MemberField spec={spec} value={undefined} onChange={onChange} pickers={pickers} />);
    const select = screen.getByRole('combobox', { name: /agentDefinitionId/ });
    expect(screen.getByRole('option', { name: 'researcher (latest v3)' })).toBeTruthy();
    await userEvent.selectOptions(select, ID);
    expect(onChange).toHaveBeenCalledWith(ID);
  });
});
