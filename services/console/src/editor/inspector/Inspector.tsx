/**
 * The right-hand panel: the selected node's config (one field per member of its kind's
 * description) and its node settings, the selected edge's members, or — with nothing
 * selected — the graph's settings (name, description, kind, chat block, schemas).
 */
import { memo, useState } from 'react';
import { CHAT_MEMBER_SPECS, CONDITION_MEMBER_SPECS, EDGE_MEMBER_SPECS, GRAPH_MEMBER_SPECS, NODE_KIND_SPECS, NODE_MEMBER_SPECS, type MemberSpec } from '@flowline/graph';
import { configOf, kindOf, type CanvasModel, type Doc } from '../model/canvas';
import { keyProblem, renameEdge, renameNode, setConfigMember, setEdgeMember, setGraphMember, setNodeMember } from '../model/edit';
import type { IssueIndex } from '../model/issues';
import type { EditorMeta } from '../use-editor';
import { MemberField, type Pickers } from './MemberField';
import { StateSection } from './StateSection';
import { stateKeysOf, templateHints } from '../model/template-hints';

export type Selection = { kind: 'node'; key: string } | { kind: 'edge'; key: string } | null;

interface Props {
  model: CanvasModel;
  setModel(f: (m: CanvasModel) => CanvasModel): void;
  meta: EditorMeta;
  setMeta(m: EditorMeta): void;
  selection: Selection;
  select(s: Selection): void;
  issues: IssueIndex;
  pickers: Pickers;
  /** its fields are disabled (a read-only editor): the panel itself takes focus, so it still scrolls by keyboard */
  readOnly?: boolean;
}

/**
 * The server's messages that name this member: `config.<name>` or `<name>` followed by a
 * space, a dot, a colon or a bracket (`nodes.summarise.config.prompt: …`,
 * `writes.findings must be …`), or `'<name>'`.
 */
export function problemsFor(messages: string[], name: string, inConfig: boolean): string[] {
  const needle = (inConfig ? `config.${name}` : name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const named = new RegExp(`(^|[^A-Za-z0-9_])${needle}([ .:\\[]|$)`);
  return messages.filter((m) => named.test(m) || m.includes(`'${name}'`));
}

function KeyField({ value, what, onRename, problem }: { value: string; what: string; onRename(next: string): void; problem(next: string): string | null }) {
  const [draft, setDraft] = useState(value);
  const [shown, setShown] = useState(value);
  if (shown !== value) {
    setShown(value);
    setDraft(value);
  }
  const err = draft === value ? null : problem(draft);
  return (
    <div className="field">
      <label htmlFor={`key-${what}`} className="field-label">
        <span className="mono">key</span> <span className="field-type">{what} key</span>
      </label>
      <input
        id={`key-${what}`}
        className="mono"
        value={draft}
        aria-invalid={err ? true : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={() => (err === null && draft !== value ? onRename(draft) : setDraft(value))}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && err === null && draft !== value) onRename(draft);
        }}
      />
      {err ? <p className="field-error">{err}</p> : <p className="field-help">Unique among node and edge keys; renaming moves the edges along.</p>}
    </div>
  );
}

function NodePanel({ model, setModel, nodeKey, select, issues, pickers }: Props & { nodeKey: string }) {
  const node = model.nodes.find((n) => n.id === nodeKey);
  if (!node) return null;
  const doc = node.data.doc;
  const kind = kindOf(doc);
  const spec = kind && kind in NODE_KIND_SPECS ? NODE_KIND_SPECS[kind] : null;
  const cfg = configOf(doc);
  const messages = (issues.byKey.get(nodeKey) ?? []).map((i) => i.message);
  const extraConfig = Object.keys(cfg).filter((k) => !spec?.config.some((m) => m.name === k));
  const nodeMembers = NODE_MEMBER_SPECS.filter((m) => !['key', 'kind', 'position', 'config', 'writes'].includes(m.name));
  const hints = templateHints(model, nodeKey);
  return (
    <div className="inspector-body">
      <div className="inspector-head">
        <span className={`kind-chip group-${spec?.group ?? 'flow'}`}>{kind ?? 'unknown kind'}</span>
        <h2>{typeof doc.label === 'string' && doc.label !== '' ? doc.label : nodeKey}</h2>
        {spec ? <p className="muted small">{spec.summary}</p> : null}
        {spec ? <p className="muted small">Output: {spec.output}</p> : null}
      </div>
      <KeyField
        value={nodeKey}
        what="node"
        problem={(next) => keyProblem(model, nodeKey, next)}
        onRename={(next) => {
          setModel((m) => renameNode(m, nodeKey, next));
          select({ kind: 'node', key: next });
        }}
      />
      <MemberField
        spec={{ ...NODE_MEMBER_SPECS.find((m) => m.name === 'label')!, example: nodeKey }}
        value={doc.label}
        onChange={(v) => setModel((m) => setNodeMember(m, nodeKey, 'label', v))}
        pickers={pickers}
      />
      <section aria-label="Config" className="inspector-section">
        <h3>Config</h3>
        {spec && spec.config.length === 0 ? <p className="muted small">{kind} nodes read no config.</p> : null}
        {spec?.config.map((m: MemberSpec) => (
          <MemberField
            key={m.name}
            spec={m}
            value={cfg[m.name]}
            onChange={(v) => setModel((mm) => setConfigMember(mm, nodeKey, m.name, v))}
            pickers={pickers}
            problems={problemsFor(messages, m.name, true)}
            hints={m.template ? hints : undefined}
          />
        ))}
        {extraConfig.map((k) => (
          <p key={k} className="field-error">
            config.{k} is not read by {kind} nodes.{' '}
            <button type="button" className="btn btn-sm" onClick={() => setModel((mm) => setConfigMember(mm, nodeKey, k, undefined))}>
              Remove it
            </button>
          </p>
        ))}
      </section>
      <section aria-label="Writes" className="inspector-section">
        <h3>Writes</h3>
        <MemberField
          spec={WRITES}
          value={doc.writes}
          onChange={(v) => setModel((mm) => setNodeMember(mm, nodeKey, 'writes', v))}
          pickers={pickers}
          problems={problemsFor(messages, 'writes', false)}
          names={hints.stateKeys}
        />
      </section>
      <details className="inspector-section">
        <summary>Node settings</summary>
        {nodeMembers
          .filter((m) => m.name !== 'label')
          .map((m) => (
            <MemberField
              key={m.name}
              spec={m.name === 'maxAttempts' && spec ? { ...m, defaultText: String(spec.maxAttempts) } : m}
              value={doc[m.name]}
              onChange={(v) => setModel((mm) => setNodeMember(mm, nodeKey, m.name, v))}
              pickers={pickers}
              problems={problemsFor(messages, m.name, false)}
            />
          ))}
      </details>
    </div>
  );
}

function EdgePanel({ model, setModel, edgeKey, select, issues, pickers }: Props & { edgeKey: string }) {
  const edge = model.edges.find((e) => e.id === edgeKey);
  if (!edge) return null;
  const doc: Doc = edge.data?.doc ?? {};
  const messages = (issues.byKey.get(edgeKey) ?? []).map((i) => i.message);
  const cond = doc.condition && typeof doc.condition === 'object' ? (doc.condition as Doc) : null;
  const setCond = (name: string, v: unknown) =>
    setModel((m) => {
      const next: Doc = { ...(cond ?? {}) };
      if (v === undefined) delete next[name];
      else next[name] = v;
      return setEdgeMember(m, edgeKey, 'condition', Object.keys(next).length === 0 ? undefined : next);
    });
  return (
    <div className="inspector-body">
      <div className="inspector-head">
        <span className="kind-chip group-edge">Edge</span>
        <h2 className="mono">
          {edge.source} → {edge.target}
        </h2>
        <p className="muted small">
          {doc.default === true ? 'Default edge: fires when no conditional sibling fired.' : cond ? 'Conditional: fires when its condition holds on the source output envelope.' : 'Unconditional: fires whenever its source settles as satisfied.'}
        </p>
      </div>
      {messages.map((msg) => (
        <p key={msg} className="field-error">
          {msg}
        </p>
      ))}
      <KeyField
        value={edgeKey}
        what="edge"
        problem={(next) => keyProblem(model, edgeKey, next)}
        onRename={(next) => {
          setModel((m) => renameEdge(m, edgeKey, next));
          select({ kind: 'edge', key: next });
        }}
      />
      <MemberField spec={{ ...EDGE_LABEL, example: undefined }} value={doc.label} onChange={(v) => setModel((m) => setEdgeMember(m, edgeKey, 'label', v))} pickers={pickers} />
      <MemberField spec={EDGE_DEFAULT} value={doc.default} onChange={(v) => setModel((m) => setEdgeMember(m, edgeKey, 'default', v))} pickers={pickers} />
      <section aria-label="Condition" className="inspector-section">
        <h3>Condition</h3>
        {doc.default === true && !cond ? <p className="muted small">A default edge carries no condition.</p> : null}
        {doc.default === true && !cond ? null : CONDITION_MEMBER_SPECS.map((m) => (
          <MemberField key={m.name} spec={m.name === 'value' ? { ...m, type: 'scalar' } : m} value={cond?.[m.name]} onChange={(v) => setCond(m.name, v)} pickers={pickers} />
        ))}
        {cond ? (
          <button type="button" className="btn btn-sm" onClick={() => setModel((m) => setEdgeMember(m, edgeKey, 'condition', undefined))}>
            Make unconditional
          </button>
        ) : null}
      </section>
    </div>
  );
}

const WRITES = NODE_MEMBER_SPECS.find((m) => m.name === 'writes')!;
const EDGE_LABEL = EDGE_MEMBER_SPECS.find((m) => m.name === 'label')!;
const EDGE_DEFAULT = EDGE_MEMBER_SPECS.find((m) => m.name === 'default')!;

function GraphPanel({ model, setModel, meta, setMeta, issues, pickers }: Props) {
  const rest = model.rest;
  const graphKind = rest.kind === 'Chat' ? 'Chat' : 'Standard';
  const messages = issues.graph.map((i) => i.message);
  const chat = rest.chat && typeof rest.chat === 'object' ? (rest.chat as Doc) : {};
  return (
    <div className="inspector-body">
      <div className="inspector-head">
        <span className="kind-chip group-graph">Workflow</span>
        <h2>Settings</h2>
        <p className="muted small">Select a node or an edge to edit it.</p>
      </div>
      <div className="field">
        <label htmlFor="def-name" className="field-label">
          Name
        </label>
        <input id="def-name" value={meta.name} onChange={(e) => setMeta({ ...meta, name: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor="def-description" className="field-label">
          Description
        </label>
        <textarea id="def-description" rows={3} value={meta.description} onChange={(e) => setMeta({ ...meta, description: e.target.value })} />
      </div>
      {GRAPH_MEMBER_SPECS.filter((m) => ['kind', 'inputSchema', 'outputSchema'].includes(m.name)).map((m) => (
        <MemberField
          key={m.name}
          spec={m}
          value={rest[m.name]}
          onChange={(v) =>
            setModel((mm) => {
              let next = setGraphMember(mm, m.name, v);
              // a Standard graph carries no chat block
              if (m.name === 'kind' && v !== 'Chat') next = setGraphMember(next, 'chat', undefined);
              return next;
            })
          }
          pickers={pickers}
          problems={problemsFor(messages, m.name, false)}
        />
      ))}
      <StateSection
        state={rest.state && typeof rest.state === 'object' && !Array.isArray(rest.state) ? (rest.state as Doc) : undefined}
        onChange={(v) => setModel((mm) => setGraphMember(mm, 'state', v))}
        messages={messages}
        writtenKeys={stateKeysOf(model)}
      />
      {graphKind === 'Chat' ? (
        <section aria-label="Chat" className="inspector-section">
          <h3>Chat</h3>
          {CHAT_MEMBER_SPECS.map((m) => (
            <MemberField
              key={m.name}
              spec={m}
              value={chat[m.name]}
              onChange={(v) =>
                setModel((mm) => {
                  const next: Doc = { ...chat };
                  if (v === undefined) delete next[m.name];
                  else next[m.name] = v;
                  return setGraphMember(mm, 'chat', Object.keys(next).length === 0 ? undefined : next);
                })
              }
              pickers={pickers}
            />
          ))}
        </section>
      ) : null}
    </div>
  );
}

/** The document the panel shows: the selected node's or edge's, else the graph's other members. */
function shownDoc(p: Props): unknown {
  const s = p.selection;
  if (s?.kind === 'node') return p.model.nodes.find((n) => n.id === s.key)?.data.doc;
  if (s?.kind === 'edge') return p.model.edges.find((e) => e.id === s.key)?.data?.doc;
  return p.model.rest;
}

/**
 * Re-renders only when what it shows changed: a drag moves nodes (new model, same documents)
 * and must not redraw every field.
 */
export const Inspector = memo(
  InspectorPanel,
  (a, b) =>
    a.selection === b.selection &&
    a.issues === b.issues &&
    a.meta === b.meta &&
    a.pickers === b.pickers &&
    a.setModel === b.setModel &&
    a.setMeta === b.setMeta &&
    a.select === b.select &&
    a.readOnly === b.readOnly &&
    a.model.nodes.length === b.model.nodes.length &&
    a.model.edges.length === b.model.edges.length &&
    shownDoc(a) === shownDoc(b),
);

function InspectorPanel(props: Props) {
  const s = props.selection;
  return (
    <aside className="inspector" aria-label="Inspector" tabIndex={props.readOnly ? 0 : undefined}>
      <fieldset className="inspector-fieldset" disabled={props.readOnly}>
        {s?.kind === 'node' ? <NodePanel {...props} nodeKey={s.key} key={`n-${s.key}`} /> : s?.kind === 'edge' ? <EdgePanel {...props} edgeKey={s.key} key={`e-${s.key}`} /> : <GraphPanel {...props} />}
      </fieldset>
    </aside>
  );
}
