/**
 * Rendering templates over a node's input document. Pure and synchronous; never throws:
 * every outcome is a value or an error message (the caller keys it to the node member).
 *
 * - A string without `{{` / `{%` is returned as it is, untouched by the engine.
 * - A string that is exactly one placeholder (`{{ state.ids }}`, filters allowed, nothing
 *   around it, not even a space) keeps the JSON type of what it names: an array stays an
 *   array. Any other template renders to text, where an object or array reads as JSON.
 * - Objects and arrays (a Tool's `arguments`, an End's `outputTemplate`) render member by
 *   member; member names are never templates.
 * Bounds: the rendered UTF-8 bytes of one value (`maxOutputBytes`, checked as text is
 * written, so a runaway loop stops at the cap rather than at the end), the engine's own
 * allocation counter (16 × `maxOutputBytes`, so ranges and string filters are bounded too),
 * and a wall-clock backstop (`renderLimitMs`) for what neither counts.
 */
import { Context, Output, toValue, toValueSync, type Emitter, type Template } from 'liquidjs';
import { utf8StringByteLength } from '../documents/envelope';
import { DEFAULT_CORE_OPTIONS, type CoreOptions, type InputDocument, type Json, type JsonObject } from '../model';
import { hasTemplateSyntax, templateEngine } from './engine';

/** The bounds of one render (options MAX_TEMPLATE_OUTPUT_BYTES, TEMPLATE_RENDER_LIMIT_MS). */
export interface TemplateLimits {
  /** most UTF-8 bytes one rendered value may hold (a typed value: its JSON text) */
  maxOutputBytes: number;
  /** wall-clock backstop of one render, ms */
  renderLimitMs: number;
}

/** The limits the core options carry. */
export function templateLimitsOf(options: Pick<CoreOptions, 'maxTemplateOutputBytes' | 'templateRenderLimitMs'>): TemplateLimits {
  return { maxOutputBytes: options.maxTemplateOutputBytes, renderLimitMs: options.templateRenderLimitMs };
}

/** @default MAX_TEMPLATE_OUTPUT_BYTES 262144, TEMPLATE_RENDER_LIMIT_MS 500 */
export const DEFAULT_TEMPLATE_LIMITS: TemplateLimits = templateLimitsOf(DEFAULT_CORE_OPTIONS);

/** What a template reads: the input document's members and the run state (`{}` when none). */
export interface TemplateScope {
  input: Json;
  state: JsonObject;
  upstream: JsonObject;
  run: JsonObject;
}

/** Where in a rendered value a failure sits: member names and indices below the member. */
export type ValuePath = readonly (string | number)[];

export type RenderOutcome = { ok: true; value: Json } | { ok: false; path: ValuePath; error: string };

/**
 * The scope of a node's templates: its input document's members as they are (an operator's
 * input edit included; the engine only reads them), plus the run state.
 */
export function templateScope(doc: InputDocument): TemplateScope {
  return {
    input: (doc.input ?? null) as Json,
    upstream: doc.upstream as unknown as JsonObject,
    run: doc.run as unknown as JsonObject,
    state: doc.state ?? {},
  };
}

/** `nodes.<key>.config.<member><inside>`: where a template sits, as validation errors and node failures name it. */
export function templatePlace(nodeKey: string, member: string, inside = ''): string {
  return `nodes.${nodeKey}.config.${member}${inside}`;
}

/**
 * Render a node's config member, naming the place of a failure:
 * `nodes.<key>.config.<member>[.<inside>]: <why>`.
 */
export function renderConfigMember(
  nodeKey: string,
  member: string,
  value: Json,
  scope: TemplateScope,
  limits: TemplateLimits,
): { value: Json } | { error: string } {
  const r = renderTemplateValue(value, scope, limits);
  return r.ok ? { value: r.value } : { error: `${templatePlace(nodeKey, member, valuePathText(r.path))}: ${r.error}` };
}

/** `.ids[0]`-style suffix for a value path (empty for the member itself). */
export function valuePathText(path: ValuePath): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join('');
}

/**
 * Render `value`: a string as a template, an object or array member by member, any other
 * JSON value as it is.
 */
export function renderTemplateValue(value: Json, scope: TemplateScope, limits: TemplateLimits): RenderOutcome {
  return renderAt(value, scope, limits, []);
}

function renderAt(value: Json, scope: TemplateScope, limits: TemplateLimits, path: (string | number)[]): RenderOutcome {
  if (typeof value === 'string') {
    const r = renderString(value, scope, limits);
    return 'error' in r ? { ok: false, path, error: r.error } : { ok: true, value: r.value };
  }
  if (Array.isArray(value)) {
    const out: Json[] = [];
    for (let i = 0; i < value.length; i++) {
      const r = renderAt(value[i]!, scope, limits, [...path, i]);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return { ok: true, value: out };
  }
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const r = renderAt(v, scope, limits, [...path, k]);
      if (!r.ok) return r;
      // defineProperty: a member named __proto__ stays a member
      Object.defineProperty(out, k, { value: r.value, enumerable: true, writable: true, configurable: true });
    }
    return { ok: true, value: out };
  }
  return { ok: true, value };
}

/** Render one string; text without template syntax comes back as it is. */
export function renderString(text: string, scope: TemplateScope, limits: TemplateLimits): { value: Json } | { error: string } {
  if (!hasTemplateSyntax(text)) return { value: text };
  let templates: Template[];
  try {
    templates = templateEngine.parse(text);
  } catch (err) {
    return { error: messageOf(err) };
  }
  const typed = templates.length === 1 && templates[0] instanceof Output;
  const emitter = new BoundedEmitter(limits.maxOutputBytes, typed);
  try {
    // a copy: `increment` and `decrement` write their counters into the top-level scope
    const ctx = new Context({ ...scope }, templateEngine.options, {
      sync: true,
      memoryLimit: limits.maxOutputBytes * 16,
      renderLimit: limits.renderLimitMs,
    }, { liquid: templateEngine });
    toValueSync(templateEngine.renderer.renderTemplates(templates, ctx, emitter));
  } catch (err) {
    return { error: messageOf(err) };
  }
  if (!typed) return { value: emitter.buffer };
  const json = toJson(emitter.raw);
  if ('error' in json) return json;
  const bytes = utf8StringByteLength(JSON.stringify(json.value));
  if (bytes > limits.maxOutputBytes) return { error: overCap(limits.maxOutputBytes) };
  return json;
}

const overCap = (max: number): string => `the rendered value is over ${max} UTF-8 bytes (MAX_TEMPLATE_OUTPUT_BYTES)`;

/**
 * Collects the rendered text and stops the render once it passes the byte cap. In typed
 * mode (one placeholder) it keeps the raw value of that placeholder instead.
 */
class BoundedEmitter implements Emitter {
  buffer = '';
  raw: unknown = undefined;
  private bytes = 0;
  constructor(
    private readonly maxBytes: number,
    private readonly typed: boolean,
  ) {}

  write(html: unknown): void {
    const value: unknown = toValue(html);
    if (this.typed) {
      this.raw = value;
      return;
    }
    const text = textOf(value);
    this.bytes += utf8StringByteLength(text);
    if (this.bytes > this.maxBytes) throw new Error(overCap(this.maxBytes));
    this.buffer += text;
  }
}

/** How a value reads inside text: strings as they are, nil as nothing, objects and arrays as JSON. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') {
    const json = toJson(v);
    return 'error' in json ? String(v) : JSON.stringify(json.value);
  }
  return String(v);
}

/** The JSON a placeholder produced, or why it is not JSON (a non-finite number, a non-plain object). */
function toJson(v: unknown): { value: Json } | { error: string } {
  if (v === undefined || v === null) return { value: null };
  if (typeof v === 'string' || typeof v === 'boolean') return { value: v };
  if (typeof v === 'number') return Number.isFinite(v) ? { value: v } : { error: `the placeholder renders to ${String(v)}, which JSON cannot hold` };
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const r = toJson(item);
      if ('error' in r) return r;
      out.push(r.value);
    }
    return { value: out };
  }
  if (typeof v === 'object') {
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return { error: 'the placeholder renders to a value JSON cannot hold' };
    const out: JsonObject = {};
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      const r = toJson(item);
      if ('error' in r) return r;
      Object.defineProperty(out, k, { value: r.value, enumerable: true, writable: true, configurable: true });
    }
    return { value: out };
  }
  return { error: `the placeholder renders to a ${typeof v}, which JSON cannot hold` };
}

/** The engine's message (it names line and column); anything else thrown, as text. */
export function messageOf(err: unknown): string {
  if (err instanceof RangeError) return 'the template nests too deeply';
  return err instanceof Error ? err.message : String(err);
}
