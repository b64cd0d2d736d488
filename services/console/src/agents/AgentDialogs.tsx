/** The saved agent dialogs: the form that creates or edits one (each save a new version), and its version history. */
import { useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { SavedAgent, SavedAgentBody } from '@flowline/client';
import { REASONING_EFFORTS } from '@flowline/graph';
import { keys, useAgentVersions } from '../api/queries';
import { useClient } from '../session/session';
import { actDialog, useKeyedAct } from '../runs/acts';
import { Dialog, DialogActions, DialogDone } from '../ui/Dialog';
import { JsonDoc } from '../ui/JsonDoc';
import { JsonField, useJsonText } from '../ui/JsonField';
import { Loading, RefusalNote, Time } from '../ui/primitives';
import { Field, linesOf, TextAreaField, TextField } from '../resources/fields';

const jsonText = (v: unknown) =>
  v === null || v === undefined || (Array.isArray(v) && v.length === 0) ? '' : JSON.stringify(v, null, 2);

/** Creates (`agent` null) or edits a saved agent. */
export function AgentForm({ agent, onClose }: { agent: SavedAgent | null; onClose(): void }) {
  const id = useId();
  const [name, setName] = useState(agent?.name ?? '');
  const [instructions, setInstructions] = useState(agent?.instructions ?? '');
  const [model, setModel] = useState(agent?.model ?? '');
  const [tools, setTools] = useState((agent?.tools ?? []).join('\n'));
  const [effort, setEffort] = useState(agent?.reasoningEffort ?? '');
  const [iterations, setIterations] = useState(
    agent?.maxIterations != null ? String(agent.maxIterations) : '',
  );
  const approvals = useJsonText(jsonText(agent?.toolApprovals), true);
  const schema = useJsonText(jsonText(agent?.responseJsonSchema), true);
  const save = useKeyedAct(keys.agents, (c, _op, body: SavedAgentBody) =>
    agent ? c.agents.update(agent.id, body) : c.agents.create(body),
  );
  const ends = actDialog(save, onClose);
  const maxIterations = iterations.trim() === '' ? null : Number(iterations);
  const valid = approvals.parsed.ok && schema.parsed.ok && name.trim() !== '' && instructions.trim() !== '';
  return (
    <Dialog
      title={agent ? `Edit ${agent.name} (saves version ${agent.latestVersion + 1})` : 'New agent'}
      onClose={ends.close}
      wide
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!approvals.parsed.ok || !schema.parsed.ok || !valid) return;
          ends.submit({
            name: name.trim(),
            instructions,
            model: model.trim() || null,
            tools: linesOf(tools),
            toolApprovals: (approvals.parsed.value as SavedAgentBody['toolApprovals']) ?? null,
            responseJsonSchema: (schema.parsed.value as Record<string, unknown> | undefined) ?? null,
            reasoningEffort: effort || null,
            maxIterations,
          });
        }}
      >
        <div className="form-row">
          <TextField
            id={`${id}-name`}
            label="Name"
            help="Unique in the tenant."
            value={name}
            onChange={setName}
            required
          />
          <TextField
            id={`${id}-model`}
            label="Model (optional)"
            help="Empty: the deployment's model."
            value={model}
            onChange={setModel}
          />
        </div>
        <TextAreaField
          id={`${id}-instructions`}
          label="Instructions"
          help="The task, sent as the first user message; templates like {{ run.input.text }} work here."
          rows={5}
          value={instructions}
          onChange={setInstructions}
          required
        />
        <div className="form-row">
          <TextAreaField
            id={`${id}-tools`}
            label="Tools"
            help="One per line: catalog tools, mcp:SERVER/TOOL or mcp:SERVER/*."
            rows={4}
            value={tools}
            onChange={setTools}
            mono
          />
          <div>
            <Field id={`${id}-effort`} label="Reasoning effort">
              <select id={`${id}-effort`} value={effort} onChange={(e) => setEffort(e.target.value)}>
                <option value="">provider default</option>
                {REASONING_EFFORTS.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </Field>
            <TextField
              id={`${id}-iterations`}
              label="Max iterations"
              help="Default 8."
              value={iterations}
              onChange={setIterations}
              numeric
            />
          </div>
        </div>
        <div className="form-field">
          <JsonField
            id={`${id}-approvals`}
            label="Tool approvals (JSON list, optional)"
            rows={2}
            field={approvals}
            help='Tool names, or { "tool", "when" } objects.'
          />
        </div>
        <div className="form-field">
          <JsonField
            id={`${id}-schema`}
            label="Response JSON Schema (optional)"
            rows={3}
            field={schema}
            help="The answer must satisfy it."
          />
        </div>
        <RefusalNote error={save.error} title="Refused" />
        <DialogActions
          back="Cancel"
          onBack={ends.close}
          act={agent ? 'Save version' : 'Create'}
          disabled={!valid || save.pending}
        />
      </form>
    </Dialog>
  );
}

/** Every version of a saved agent, newest first; the chosen one's members. */
export function AgentHistory({ agent, onClose }: { agent: SavedAgent; onClose(): void }) {
  const client = useClient();
  const versions = useAgentVersions(agent.id);
  const [shown, setShown] = useState(agent.latestVersion);
  const at = useQuery({
    queryKey: [...keys.agentVersions(agent.id), shown],
    queryFn: () => client.agents.version(agent.id, shown),
  });
  return (
    <Dialog title={`History of ${agent.name}`} onClose={onClose} wide>
      <RefusalNote error={versions.error} title="Could not list the versions" />
      <div className="version-list">
        <nav aria-label="Versions">
          <ol>
            {(versions.data?.items ?? []).map((v) => (
              <li key={v.version}>
                <button
                  type="button"
                  className={`btn btn-ghost btn-sm${v.version === shown ? ' is-active' : ''}`}
                  aria-current={v.version === shown || undefined}
                  onClick={() => setShown(v.version)}
                >
                  v{v.version} · <Time iso={v.createdAt} />
                </button>
              </li>
            ))}
          </ol>
        </nav>
        <div>
          {at.isPending ? <Loading /> : null}
          <RefusalNote error={at.error} title="Could not read the version" />
          {at.data ? (
            <JsonDoc title={`Version ${at.data.version}`} value={membersOf(at.data)} expandAll />
          ) : null}
        </div>
      </div>
      <DialogDone onClose={onClose} />
    </Dialog>
  );
}

function membersOf(a: SavedAgent) {
  const { id: _id, createdAt: _c, updatedAt: _u, latestVersion: _l, ...rest } = a;
  return rest;
}
