/**
 * "Start run", the one start dialog (the definitions page, its `?start=` link, the editor):
 * the run input as a form generated from the input JSON Schema — the graph's `inputSchema`
 * and the Start node's, both apply — with each field's errors under it (@rjsf/core over
 * schema-validator.ts), or as raw JSON (always there; the only way when no schema describes
 * members), checked against the same schemas before it is sent; prefilled from the Start
 * node's `defaultInput`. The start carries a `requestId` chosen when the dialog opened (a
 * double click or a re-sent request is the same start). A refusal is shown as answered.
 */
import { useId, useMemo, useRef, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
// the Form alone: the package's index also exports a test registry that loads an Ajv validator
import Form from '@rjsf/core/lib/components/Form.js';
import type { RJSFSchema, UiSchema } from '@rjsf/utils';
import { useDefinition } from '../api/queries';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { PairLinesField, parsePairLines } from '../ui/PairLinesField';
import { Loading, RefusalNote } from '../ui/primitives';
import { defaultInputOf, readGraphDoc } from './graph-doc';
import { formValidator, inputProblems } from './schema-validator';
import { DEFAULT_PRIORITY } from '../runs/RunFacts';
import './start-form.css';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The input schemas a start is checked against, each named by where it is written. */
export function inputSchemasOf(graph: unknown): Array<[string, Json]> {
  const out: Array<[string, Json]> = [];
  const g = isObject(graph) ? graph : {};
  if (isObject(g.inputSchema)) out.push(['inputSchema', g.inputSchema]);
  const start = readGraphDoc(graph).nodes.find((n) => n.kind === 'Start');
  if (start && isObject(start.config.inputSchema)) out.push([`${start.key}.config.inputSchema`, start.config.inputSchema]);
  return out;
}

/** True when a schema names members a form can show (an object with `properties`, itself or in an `allOf` part). */
function describesMembers(s: Json): boolean {
  return isObject(s.properties) || (Array.isArray(s.allOf) && s.allOf.some((x) => isObject(x) && describesMembers(x)));
}

/** The schema the form is generated from: the one schema, or both as `allOf`; null when no form can be drawn. */
export function formSchemaOf(schemas: Array<[string, Json]>): RJSFSchema | null {
  const list = schemas.map(([, s]) => s);
  const one = list.length === 1 ? list[0]! : list.length > 1 ? { allOf: list } : null;
  return one && describesMembers(one) ? (one as RJSFSchema) : null;
}

/**
 * The form's field order: the required members first, in their list's order, then the rest.
 * (Stored documents do not keep the order an author wrote `properties` in; a list keeps its order.)
 */
export function fieldOrderOf(schema: RJSFSchema): UiSchema {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = (Array.isArray(schema.required) ? schema.required : []).filter((k) => k in props);
  return required.length > 0 ? { 'ui:order': [...required, '*'] } : {};
}

type Mode = 'form' | 'json';

function InputForm({ definition, graph, onClose }: { definition: { id: string; name: string }; graph: unknown; onClose(): void }) {
  const client = useClient();
  const navigate = useNavigate();
  const schemas = useMemo(() => inputSchemasOf(graph), [graph]);
  const formSchema = useMemo(() => formSchemaOf(schemas), [schemas]);
  const uiSchema = useMemo(() => (formSchema ? fieldOrderOf(formSchema) : {}), [formSchema]);
  const initialInput = useMemo(() => defaultInputOf(graph), [graph]);
  const [mode, setMode] = useState<Mode>(formSchema ? 'form' : 'json');
  const [formData, setFormData] = useState<unknown>(isObject(initialInput) ? initialInput : {});
  // after a refused submit, the form checks each field as it changes
  const [tried, setTried] = useState(false);
  const [switchNote, setSwitchNote] = useState<string | null>(null);
  const formRef = useRef<Form>(null);
  const field = useJsonText(initialInput === undefined ? '' : JSON.stringify(initialInput, null, 2), true);
  const { parsed } = field;
  const problems = useMemo(() => (mode === 'json' && parsed.ok ? inputProblems(parsed.value, schemas) : []), [mode, parsed, schemas]);
  const requestId = useMemo(newOperationId, []);
  const id = useId();
  const [metaText, setMetaText] = useState('');
  const [priority, setPriority] = useState(DEFAULT_PRIORITY);
  const meta = parsePairLines(metaText);
  const start = useMutation({
    mutationFn: ({ input, metadata }: { input: unknown; metadata: Record<string, string> | undefined }) =>
      client.runs.start(
        definition.id,
        {
          requestId,
          ...(input !== undefined ? { input } : {}),
          ...(metadata ? { metadata } : {}),
          ...(priority !== DEFAULT_PRIORITY ? { priority } : {}),
        },
        { idempotencyKey: requestId },
      ),
    onSuccess: ({ runId }) => void navigate({ to: '/run', search: { runId } }),
  });
  const switchTo = (next: Mode) => {
    setSwitchNote(null);
    if (next === mode) return;
    if (next === 'json') field.setText(JSON.stringify(formData, null, 2));
    else if (parsed.ok && (parsed.value === undefined || isObject(parsed.value))) setFormData(parsed.value ?? {});
    else return setSwitchNote(parsed.ok ? 'The form edits an object: this input is not one.' : 'The text is not JSON yet: fix it to edit it as a form.');
    setMode(next);
  };
  const jsonReady = parsed.ok && problems.length === 0;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!meta.ok) return;
        if (mode === 'form') {
          if (!formRef.current?.validateForm()) return setTried(true);
          start.mutate({ input: formData, metadata: meta.value });
        } else if (jsonReady) start.mutate({ input: parsed.value, metadata: meta.value });
      }}
    >
      {formSchema ? (
        <fieldset className="input-mode">
          <legend>Run input</legend>
          {(['form', 'json'] as const).map((m) => (
            <label key={m} className="option-check">
              <input type="radio" name={`${id}-mode`} value={m} checked={mode === m} onChange={() => switchTo(m)} /> {m === 'form' ? 'Form' : 'JSON'}
            </label>
          ))}
          {switchNote ? (
            <p className="field-error" role="alert">
              {switchNote}
            </p>
          ) : null}
        </fieldset>
      ) : null}
      {mode === 'form' && formSchema ? (
        <div className="schema-form" data-testid="schema-form">
          <Form
            ref={formRef}
            tagName="div"
            schema={formSchema}
            uiSchema={uiSchema}
            validator={formValidator}
            formData={formData}
            onChange={(e) => setFormData(e.formData)}
            liveValidate={tried ? 'onChange' : undefined}
            showErrorList={false}
            noHtml5Validate
            idPrefix={`${id}-input`}
          >
            {/* the dialog's own buttons submit */}
            <></>
          </Form>
        </div>
      ) : (
        <>
          <JsonField
            id={`${id}-json`}
            label="Run input (JSON)"
            rows={10}
            field={field}
            help={schemas.length > 0 ? 'Checked against the input schema before it is sent. Empty means no input.' : 'Empty means no input. Prefilled from the Start node’s defaultInput.'}
          />
          {problems.length > 0 ? (
            <ul className="field-error input-problems" aria-label="Input problems">
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          ) : null}
        </>
      )}
      <PairLinesField
        id={`${id}-meta`}
        label="Metadata (optional)"
        text={metaText}
        onText={setMetaText}
        parsed={meta}
        placeholder={'customer: acme\nbatch: nightly-42'}
        help="One key: value per line. Searchable in the runs list; stored unencrypted."
        shape="key: value"
      />
      <div className="field">
        <label htmlFor={`${id}-priority`}>Priority</label>
        <select id={`${id}-priority`} value={priority} onChange={(e) => setPriority(Number(e.target.value))} aria-describedby={`${id}-priority-help`}>
          {[5, 4, 3, 2, 1].map((p) => (
            <option key={p} value={p}>
              {p}
              {p === 5 ? ' (most urgent)' : p === 1 ? ' (least urgent)' : p === DEFAULT_PRIORITY ? ' (default)' : ''}
            </option>
          ))}
        </select>
        <span id={`${id}-priority-help`} className="muted small">
          Higher runs first among this tenant’s waiting work.
        </span>
      </div>
      <RefusalNote error={start.error} title="The run was not started" />
      <DialogActions
        back="Cancel"
        onBack={onClose}
        act={start.isPending ? 'Starting…' : 'Start run'}
        disabled={!meta.ok || (mode === 'json' && !jsonReady) || start.isPending || start.isSuccess}
      />
    </form>
  );
}

export function StartRunDialog({ definition, onClose }: { definition: { id: string; name: string }; onClose(): void }) {
  const full = useDefinition(definition.id);
  return (
    <Dialog title={`Start “${definition.name}”`} onClose={onClose} wide>
      {full.isPending ? <Loading label="Reading the definition" /> : null}
      <RefusalNote error={full.error} />
      {full.data ? <InputForm key={full.data.version} definition={definition} graph={full.data.graph} onClose={onClose} /> : null}
    </Dialog>
  );
}
