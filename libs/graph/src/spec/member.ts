/**
 * The shape of one member description (CONTRACT §1–§2): the type, whether it is required,
 * its default, the values or range it may take, and a one-line help text. The parser
 * derives its member checks from these descriptions (`parse/member-check.ts`), the editor
 * generates its config panels from them, and the graph reference is written from them, so
 * the three cannot disagree.
 */
import type { Json } from '../model';

/**
 * What a member holds:
 * - `string` (optionally `nonBlank`, `multiline` — an editor hint for prompts)
 * - `key` — a node or edge key: 1–64 of `[A-Za-z0-9_-]`
 * - `boolean`, `integer` / `number` (with `min` / `max`)
 * - `enum` — one of `values`; `enumList` — a non-empty list of distinct `values`
 * - `stringList` — a list of strings (`minItems`, `maxItems`, `maxLength`, `unique`,
 *   `nonBlank`, `format: 'httpUrl'` for absolute http(s) URLs)
 * - `stringOrList` — a string or a list of strings
 * - `dotPath` — `a.b.c`: no wildcard, no indexing, no empty segment
 * - `bindings` — an object of name → dot path
 * - `jsonSchema` — a JSON Schema object that compiles
 * - `json` — any JSON value; `object` — any JSON object
 * - `scalar` — a string, number, boolean or null
 * - `condition` — `{ path?, op, value? }` (see {@link CONDITION_MEMBER_SPECS})
 * - `record` — a closed object whose `members` are described in turn
 * - `joinPolicy` — `"All" | "Any" | "First" | { "quorum": N }`
 * - `position` — `{ x, y }`, numbers
 * - `list` — an array of documents (the graph's `nodes` and `edges`)
 */
export type MemberType =
  | 'string'
  | 'key'
  | 'boolean'
  | 'integer'
  | 'number'
  | 'enum'
  | 'enumList'
  | 'stringList'
  | 'stringOrList'
  | 'dotPath'
  | 'bindings'
  | 'jsonSchema'
  | 'json'
  | 'object'
  | 'scalar'
  | 'condition'
  | 'record'
  | 'joinPolicy'
  | 'position'
  | 'list';

/** One member of a graph, node, edge, condition or per-kind config document. */
export interface MemberSpec {
  readonly name: string;
  readonly type: MemberType;
  /** absent or null is refused */
  readonly required: boolean;
  /** the value used when the member is absent or null, when that is a fixed value */
  readonly default?: Json;
  /** the default when it is not one fixed value (a deployment option, another member) */
  readonly defaultText?: string;
  /** `enum` / `enumList` / `joinPolicy`: the allowed names */
  readonly values?: readonly string[];
  /** `integer` / `number`: inclusive range */
  readonly min?: number;
  readonly max?: number;
  /** lists: length range */
  readonly minItems?: number;
  readonly maxItems?: number;
  /** `stringList` items: at most this many characters */
  readonly maxLength?: number;
  /** `stringList` / `enumList`: no item twice */
  readonly unique?: boolean;
  /** `string` (and `stringList` items): not empty or whitespace only */
  readonly nonBlank?: boolean;
  /** `stringList` items: absolute http(s) URLs */
  readonly format?: 'httpUrl';
  /** `stringList`: what one item is called in messages ("label") */
  readonly itemNoun?: string;
  /** editor hint: edit as multi-line text */
  readonly multiline?: boolean;
  /** the value names something else: a tool of the catalog (`GET /v1/tools`), a definition, a node */
  readonly refersTo?: 'tool' | 'definition' | 'node' | 'agent';
  /** `record`: its closed member list */
  readonly members?: readonly MemberSpec[];
  /**
   * the member holds a template (`template/`): a string, or every string inside an object or
   * array, rendered over `input`, `state`, `upstream` and `run`; judged at validation
   */
  readonly template?: boolean;
  /** the member only applies to Chat graphs */
  readonly chatOnly?: boolean;
  /** one user-facing sentence (or two) */
  readonly help: string;
  /** a typical value, valid on its own */
  readonly example?: Json;
}

/** Palette groups of node kinds. */
export const NODE_KIND_GROUPS = ['flow', 'model', 'tool', 'human', 'child'] as const;
export type NodeKindGroup = (typeof NODE_KIND_GROUPS)[number];

/** A member list by name, in declaration order. */
export function memberNamed(list: readonly MemberSpec[], name: string): MemberSpec | undefined {
  return list.find((m) => m.name === name);
}
