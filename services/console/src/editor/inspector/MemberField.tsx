/**
 * One form field per member description (`@flowline/graph` MemberSpec): the widget follows
 * the member's type — text, number, a choice among its values, checkboxes, a name → path
 * list for bindings, a tool or definition picker, or a JSON editor for JSON-shaped members —
 * and shows the member's default and help. Clearing a field removes the member (absent =
 * the default); the server's parser judges every value.
 */
import { useId, useState } from 'react';
import type { MemberSpec } from '@flowline/graph';
import { JsonEditor } from './JsonEditor';
import type { TemplateHints } from '../model/template-hints';

export interface Pickers {
  /** tool names of the catalog (`GET /v1/tools`) */
  tools: string[];
  /** definitions a Loop or Subworkflow may name */
  definitions: Array<{ id: string; name: string }>;
  /** saved agents an Agent may name (`agentDefinitionId`), with their latest version */
  agents: Array<{ id: string; name: string; latestVersion: number }>;
}

export interface MemberFieldProps {
  spec: MemberSpec;
  value: unknown;
  onChange(value: unknown): void;
  pickers: Pickers;
  /** the server's messages about this member */
  problems?: string[];
  /** for a template member: what `{{ … }}` may name in this graph (offered as it is typed) */
  hints?: TemplateHints;
  /** for bindings: names offered for the name column (a node's writes: the state keys) */
  names?: string[];
}

/** "default: …" text of a member (null when it has none). */
export function defaultText(spec: MemberSpec): string | null {
  if (spec.defaultText) return spec.defaultText;
  if (spec.default !== undefined) return JSON.stringify(spec.default);
  return null;
}

const JSON_SHAPED: ReadonlySet<MemberSpec['type']> = new Set(['json', 'object', 'jsonSchema', 'record', 'condition', 'stringOrList', 'scalar', 'position', 'list']);

function Help({ spec, id, problems }: { spec: MemberSpec; id: string; problems?: string[] }) {
  const d = defaultText(spec);
  return (
    <div id={id} className="field-help">
      {problems?.map((p) => (
        <p key={p} className="field-error">
          {p}
        </p>
      ))}
      <p>
        {spec.help}
        {d ? <span className="field-default"> Default: {d}.</span> : null}
      </p>
    </div>
  );
}

function Label({ spec, htmlFor }: { spec: MemberSpec; htmlFor?: string }) {
  const inner = (
    <>
      <span className="mono">{spec.name}</span>
      {spec.required ? <span className="req" title="required"> *</span> : null}
      <span className="field-type">{typeText(spec)}</span>
    </>
  );
  // a group (checkboxes, binding rows) is named by aria-label; a lone control by its label
  return htmlFor ? (
    <label htmlFor={htmlFor} className="field-label">
      {inner}
    </label>
  ) : (
    <span className="field-label">{inner}</span>
  );
}

function typeText(spec: MemberSpec): string {
  if (spec.type === 'integer' || spec.type === 'number') {
    const range = spec.min !== undefined && spec.max !== undefined ? ` ${spec.min}–${spec.max}` : spec.min !== undefined ? ` ≥ ${spec.min}` : '';
    return `${spec.type}${range}`;
  }
  return spec.type;
}

/** Name → dot path rows (LlmCall / DecisionModel `inputBindings`, Tool `argumentBindings`). */
function BindingsField({ spec, value, onChange, helpId, names }: { spec: MemberSpec; value: unknown; onChange(v: unknown): void; helpId: string; names?: string[] }) {
  const listId = `${helpId}-names`;
  const rows = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value as Record<string, unknown>) : [];
  const [draft, setDraft] = useState({ name: '', path: '' });
  const write = (next: Array<[string, unknown]>) => onChange(next.length === 0 ? undefined : Object.fromEntries(next));
  return (
    <div className="bindings" aria-describedby={helpId} role="group" aria-label={spec.name}>
      {rows.map(([name, path], i) => (
        <div key={`${name}-${i}`} className="binding-row">
          <input aria-label={`${spec.name} name ${i + 1}`} value={name} onChange={(e) => write(rows.map((r, j) => (j === i ? [e.target.value, r[1]] : r)))} />
          <span aria-hidden="true">→</span>
          <input
            aria-label={`${spec.name} path of ${name}`}
            className="mono"
            value={typeof path === 'string' ? path : JSON.stringify(path)}
            onChange={(e) => write(rows.map((r, j) => (j === i ? [r[0], e.target.value] : r)))}
          />
          <button type="button" className="icon-button" aria-label={`Remove ${name}`} onClick={() => write(rows.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <div className="binding-row binding-new">
        <input
          aria-label={`New ${spec.name} name`}
          placeholder={names ? 'state key' : 'name'}
          list={names ? listId : undefined}
          value={draft.name}
          onChange={(e) => setDraft({ ...draft, name: e.target.value })}
        />
        {names ? (
          <datalist id={listId}>
            {names.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        ) : null}
        <span aria-hidden="true">→</span>
        <input
          aria-label={`New ${spec.name} path`}
          className="mono"
          placeholder={names ? 'output.result' : 'run.input.text'}
          value={draft.path}
          onChange={(e) => setDraft({ ...draft, path: e.target.value })}
        />
        <button
          type="button"
          className="btn btn-sm"
          disabled={draft.name.trim() === '' || draft.path.trim() === ''}
          onClick={() => {
            write([...rows, [draft.name.trim(), draft.path.trim()]]);
            setDraft({ name: '', path: '' });
          }}
        >
          Add
        </button>
      </div>
    </div>
  );
}

export function MemberField({ spec, value, onChange, pickers, problems, hints, names }: MemberFieldProps) {
  const id = useId();
  const helpId = `${id}-help`;
  const invalid = problems && problems.length > 0 ? true : undefined;
  const common = { id, 'aria-describedby': helpId, 'aria-invalid': invalid } as const;
  // a template string is edited as text with completion; a JSON-shaped one as JSON with completion
  const templateText = spec.template === true && spec.type === 'string';

  if (JSON_SHAPED.has(spec.type) || templateText) {
    return (
      <div className="member">
        <JsonEditor
          id={id}
          label={`${spec.name}${spec.required ? ' *' : ''} (${templateText ? 'template' : `${spec.type}, JSON`})`}
          value={value}
          onChange={onChange}
          help={[spec.help, defaultText(spec) ? `Default: ${defaultText(spec)}.` : '', spec.template ? 'Type {{ for input., state., upstream., run.' : ''].filter(Boolean).join(' ')}
          placeholder={spec.example !== undefined ? (templateText ? String(spec.example) : JSON.stringify(spec.example)) : undefined}
          testId={`member-${spec.name}`}
          text={templateText}
          hints={spec.template ? hints : undefined}
          problems={problems}
          minLines={templateText ? 2 : 3}
        />
      </div>
    );
  }

  let control;
  switch (spec.type) {
    case 'boolean':
      control = (
        <select {...common} value={value === true ? 'true' : value === false ? 'false' : ''} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value === 'true')}>
          <option value="">default{defaultText(spec) ? ` (${defaultText(spec)})` : ''}</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      );
      break;
    case 'integer':
    case 'number':
      control = (
        <input
          {...common}
          type="number"
          inputMode={spec.type === 'integer' ? 'numeric' : 'decimal'}
          step={spec.type === 'integer' ? 1 : 'any'}
          min={spec.min}
          max={spec.max}
          value={typeof value === 'number' ? value : ''}
          placeholder={defaultText(spec) ?? ''}
          onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        />
      );
      break;
    case 'enum':
      control = (
        <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}>
          <option value="">{spec.required ? 'choose…' : `default${defaultText(spec) ? ` (${defaultText(spec)})` : ''}`}</option>
          {(spec.values ?? []).map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      );
      break;
    case 'enumList': {
      const list = Array.isArray(value) ? (value as unknown[]) : [];
      control = (
        <div role="group" aria-label={spec.name} aria-describedby={helpId} className="checks">
          {(spec.values ?? []).map((v) => (
            <label key={v} className="check">
              <input
                type="checkbox"
                checked={list.includes(v)}
                onChange={(e) => {
                  const next = e.target.checked ? [...(spec.values ?? [])].filter((x) => x === v || list.includes(x)) : list.filter((x) => x !== v);
                  onChange(next.length === 0 ? undefined : next);
                }}
              />
              {v}
            </label>
          ))}
        </div>
      );
      break;
    }
    case 'stringList': {
      const list = Array.isArray(value) ? (value as unknown[]).map(String) : [];
      if (spec.refersTo === 'tool') {
        control = (
          <div role="group" aria-label={spec.name} aria-describedby={helpId} className="checks">
            {[...new Set([...pickers.tools, ...list])].map((t) => (
              <label key={t} className="check mono">
                <input
                  type="checkbox"
                  checked={list.includes(t)}
                  onChange={(e) => {
                    const next = e.target.checked ? [...list, t] : list.filter((x) => x !== t);
                    onChange(next.length === 0 ? undefined : next);
                  }}
                />
                {t}
              </label>
            ))}
          </div>
        );
      } else {
        control = (
          <textarea
            {...common}
            rows={Math.max(2, list.length + 1)}
            value={list.join('\n')}
            placeholder="one per line"
            onChange={(e) => {
              const next = e.target.value.split('\n');
              onChange(e.target.value === '' ? undefined : next);
            }}
          />
        );
      }
      break;
    }
    case 'bindings':
      control = <BindingsField spec={spec} value={value} onChange={onChange} helpId={helpId} names={names} />;
      break;
    default: {
      // string, key, dotPath
      const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
      if (spec.refersTo === 'tool' || spec.refersTo === 'definition' || spec.refersTo === 'agent') {
        const options =
          spec.refersTo === 'tool'
            ? pickers.tools.map((t) => ({ id: t, name: t }))
            : spec.refersTo === 'agent'
              ? pickers.agents.map((a) => ({ id: a.id, name: `${a.name} (latest v${a.latestVersion})` }))
              : pickers.definitions;
        control = (
          <select {...common} value={text} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}>
            <option value="">choose…</option>
            {options.some((o) => o.id === text) || text === '' ? null : <option value={text}>{text}</option>}
            {options.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        );
      } else if (spec.multiline) {
        control = <textarea {...common} rows={4} value={text} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />;
      } else {
        control = (
          <input
            {...common}
            className={spec.type === 'dotPath' ? 'mono' : undefined}
            value={text}
            placeholder={spec.example !== undefined ? String(spec.example) : (defaultText(spec) ?? '')}
            onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
          />
        );
      }
    }
  }
  return (
    <div className="member field" data-testid={`member-${spec.name}`}>
      <Label spec={spec} htmlFor={spec.type === 'enumList' || spec.type === 'bindings' || (spec.type === 'stringList' && spec.refersTo === 'tool') ? undefined : id} />
      {control}
      <Help spec={spec} id={helpId} problems={problems} />
    </div>
  );
}
