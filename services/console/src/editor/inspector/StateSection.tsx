/**
 * The graph's run state, in the inspector's graph settings: each state key with its reducer
 * (rows to add, change and remove), the state's JSON Schema and its initial value. Writing
 * the last of them away removes the `state` member. The server's errors about `state…` are
 * drawn on the member they name.
 */
import { useState } from 'react';
import { GRAPH_MEMBER_SPECS, STATE_REDUCERS } from '@flowline/graph';
import type { Doc } from '../model/canvas';
import { JsonEditor } from './JsonEditor';

const SPEC = Object.fromEntries((GRAPH_MEMBER_SPECS.find((m) => m.name === 'state')?.members ?? []).map((m) => [m.name, m]));

const JSON_MEMBERS = [
  { name: 'schema', label: 'schema (JSON Schema)' },
  { name: 'initial', label: 'initial (JSON object)' },
] as const;

/** The messages naming `state.<member>` (or the state block itself when `member` is null). */
function stateProblems(messages: string[], member: string | null): string[] {
  const named = (m: string) => /^'?state\.(schema|reducers|initial)\b/.exec(m)?.[1] ?? null;
  return messages.filter((m) => (member === null ? /^'?state\b/.test(m) && named(m) === null : named(m) === member));
}

export function StateSection({ state, onChange, messages, writtenKeys }: { state: Doc | undefined; onChange(next: Doc | undefined): void; messages: string[]; writtenKeys: string[] }) {
  const block = state ?? {};
  const reducers = block.reducers && typeof block.reducers === 'object' && !Array.isArray(block.reducers) ? (block.reducers as Record<string, unknown>) : {};
  const rows = Object.entries(reducers);
  const [draft, setDraft] = useState({ key: '', reducer: 'overwrite' });
  const setMember = (name: string, v: unknown) => {
    const next: Doc = { ...block };
    if (v === undefined) delete next[name];
    else next[name] = v;
    onChange(Object.keys(next).length === 0 ? undefined : next);
  };
  const setReducers = (next: Array<[string, unknown]>) => setMember('reducers', next.length === 0 ? undefined : Object.fromEntries(next));
  const unlisted = writtenKeys.filter((k) => !(k in reducers));
  const reducerProblems = stateProblems(messages, 'reducers');
  return (
    <section aria-labelledby="graph-state-title" className="inspector-section state-section" id="graph-state">
      <h3 id="graph-state-title">State</h3>
      <p className="muted small">
        A JSON object kept with each run: nodes write it through their <span className="mono">writes</span>, templates and bindings read it as{' '}
        <span className="mono">state.…</span>
      </p>
      {stateProblems(messages, null).map((p) => (
        <p key={p} className="field-error">
          {p}
        </p>
      ))}
      <div className="field" role="group" aria-labelledby="state-keys-label">
        <span className="field-label" id="state-keys-label">
          Keys and reducers
        </span>
        {rows.map(([key, reducer], i) => (
          <div key={`${key}-${i}`} className="binding-row state-key-row" data-state-key={key}>
            <input aria-label={`State key ${i + 1}`} className="mono" value={key} onChange={(e) => setReducers(rows.map((r, j) => (j === i ? [e.target.value, r[1]] : r)))} />
            <select aria-label={`Reducer of ${key}`} value={String(reducer)} onChange={(e) => setReducers(rows.map((r, j) => (j === i ? [r[0], e.target.value] : r)))}>
              {STATE_REDUCERS.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <button type="button" className="icon-button" aria-label={`Remove state key ${key}`} onClick={() => setReducers(rows.filter((_, j) => j !== i))}>
              ✕
            </button>
          </div>
        ))}
        <div className="binding-row binding-new">
          <input aria-label="New state key" className="mono" placeholder="findings" value={draft.key} onChange={(e) => setDraft({ ...draft, key: e.target.value })} />
          <select aria-label="Reducer of the new state key" value={draft.reducer} onChange={(e) => setDraft({ ...draft, reducer: e.target.value })}>
            {STATE_REDUCERS.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="btn btn-sm"
            disabled={draft.key.trim() === '' || draft.key.trim() in reducers}
            onClick={() => {
              setReducers([...rows, [draft.key.trim(), draft.reducer]]);
              setDraft({ key: '', reducer: 'overwrite' });
            }}
          >
            Add key
          </button>
        </div>
        {reducerProblems.map((p) => (
          <p key={p} className="field-error">
            {p}
          </p>
        ))}
        <p className="field-help">
          {SPEC.reducers!.help}
          {unlisted.length > 0 ? <> Written but not listed (overwrite): <span className="mono">{unlisted.join(', ')}</span>.</> : null}
        </p>
      </div>
      {JSON_MEMBERS.map(({ name, label }) => (
        <JsonEditor
          key={name}
          label={label}
          value={block[name]}
          onChange={(v) => setMember(name, v)}
          help={SPEC[name]!.help}
          placeholder={JSON.stringify(SPEC[name]!.example)}
          problems={stateProblems(messages, name)}
          testId={`state-${name}`}
          minLines={name === 'initial' ? 2 : 3}
        />
      ))}
    </section>
  );
}
