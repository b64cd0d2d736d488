/**
 * docs/reference/rest-api.md: the REST routes rendered from the OpenAPI document the API
 * serves at `/openapi.json` (built in-process from the route schemas), grouped by tag,
 * with each component schema's members.
 */
import { servedOpenApiDocument, type OpenApiDocument, type OpenApiOperation } from '../../services/api/src/openapi-document';
import { code, generatedBanner, page, table } from './markdown';

type Schema = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;
const TAG_ORDER = ['definitions', 'runs', 'gates', 'operator', 'conversations', 'tools', 'session', 'ops'];

const refName = (ref: string) => ref.replace('#/components/schemas/', '');
const schemaAnchor = (name: string) => `#schema-${name.toLowerCase()}`;

/** A short type text for a JSON Schema (links to component schemas). */
export function typeOf(s: unknown): string {
  if (typeof s !== 'object' || s === null) return 'any';
  const o = s as Schema;
  if (typeof o.$ref === 'string') return `[${refName(o.$ref)}](${schemaAnchor(refName(o.$ref))})`;
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(o[k])) return (o[k] as unknown[]).map(typeOf).join(' \\| ');
  }
  if (Array.isArray(o.enum)) return (o.enum as unknown[]).map((v) => code(JSON.stringify(v))).join(' \\| ');
  if (o.const !== undefined) return code(JSON.stringify(o.const));
  const types = Array.isArray(o.type) ? (o.type as string[]) : typeof o.type === 'string' ? [o.type] : [];
  if (types.length === 0) return o.properties ? 'object' : 'any JSON';
  return types
    .map((t) => {
      if (t === 'array') return `array of ${typeOf(o.items)}`;
      if (t === 'string' && typeof o.format === 'string') return `string (${o.format})`;
      return t;
    })
    .join(' \\| ');
}

function constraints(s: unknown): string {
  if (typeof s !== 'object' || s === null) return '';
  const o = s as Schema;
  const parts: string[] = [];
  if (o.minimum !== undefined && o.maximum !== undefined) parts.push(`${o.minimum}–${o.maximum}`);
  else if (o.minimum !== undefined) parts.push(`≥ ${o.minimum}`);
  else if (o.maximum !== undefined) parts.push(`≤ ${o.maximum}`);
  if (o.minLength !== undefined && o.maxLength !== undefined) parts.push(`${o.minLength}–${o.maxLength} characters`);
  else if (o.maxLength !== undefined) parts.push(`≤ ${o.maxLength} characters`);
  if (o.default !== undefined) parts.push(`default ${code(JSON.stringify(o.default))}`);
  return parts.join(', ');
}

function membersTable(s: Schema): string | null {
  const props = s.properties as Record<string, Schema> | undefined;
  if (!props || Object.keys(props).length === 0) return null;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  return table(
    ['member', 'type', 'required', 'notes'],
    Object.entries(props).map(([name, p]) => [
      code(name),
      typeOf(p),
      required.has(name) ? 'yes' : 'no',
      [typeof p.description === 'string' ? p.description : '', constraints(p)].filter(Boolean).join('; '),
    ]),
  );
}

function bodyOf(op: OpenApiOperation): string | null {
  const content = op.requestBody?.content;
  if (!content) return null;
  const [type, media] = Object.entries(content)[0] ?? [];
  if (!type || !media) return null;
  const schema = (media.schema ?? {}) as Schema;
  const members = membersTable(schema);
  const head = `**Body** (${code(type)}${op.requestBody?.required ? ', required' : ''}): ${typeOf(schema)}`;
  return members ? `${head}\n\n${members}` : head;
}

function operationSection(method: string, path: string, op: OpenApiOperation): string {
  const scope = op.security?.[0]?.bearer?.[0];
  const auth = op.security !== undefined && op.security.length === 0 ? 'no key' : scope ? `key with the ${code(scope)} scope` : 'key';
  const description = (op.description ?? '').replace(/\n*Needs a key with the `\w+` scope\.\s*$/, '').trim();
  const params = (op.parameters ?? []).map((p) => [code(p.name), p.in, typeOf(p.schema), p.required ? 'yes' : 'no', [p.description ?? '', constraints(p.schema)].filter(Boolean).join('; ')]);
  const responses = Object.entries(op.responses ?? {}).map(([status, r]) => {
    const media = Object.entries(r.content ?? {})[0];
    return [code(status), media ? `${typeOf(media[1].schema)} (${code(media[0])})` : '—', r.description ?? ''];
  });
  return page([
    `### ${op.summary ?? op.operationId ?? `${method} ${path}`}`,
    `${code(`${method.toUpperCase()} ${path}`)} · operationId ${code(op.operationId ?? '—')} · ${auth}`,
    description || null,
    params.length > 0 ? `**Parameters**\n\n${table(['name', 'in', 'type', 'required', 'notes'], params)}` : null,
    bodyOf(op),
    `**Answers**\n\n${table(['status', 'body', 'when'], responses)}`,
  ]).trimEnd();
}

/** Renders the document; exported for tests that render a document of their own. */
export function renderRestReferenceOf(doc: OpenApiDocument): string {
  const byTag = new Map<string, string[]>();
  const index: string[][] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      const list = byTag.get(tag) ?? [];
      list.push(operationSection(method, path, op));
      byTag.set(tag, list);
      index.push([code(`${method.toUpperCase()} ${path}`), op.summary ?? '', tag]);
    }
  }
  const tags = [...byTag.keys()].sort((a, b) => {
    const ia = TAG_ORDER.indexOf(a);
    const ib = TAG_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : 1);
  });
  const schemas = Object.entries((doc.components?.schemas ?? {}) as Record<string, Schema>).map(([name, s]) =>
    page([`<a id="${schemaAnchor(name).slice(1)}"></a>\n### ${name}`, typeof s.description === 'string' ? s.description : null, membersTable(s) ?? `${typeOf(s)}`]).trimEnd(),
  );
  return page([
    generatedBanner('the OpenAPI document the API serves at `/openapi.json` (`services/api/src/routes`, `services/api/src/schemas.ts`)'),
    '# REST API reference',
    `${doc.info.description ?? ''} A running API serves the same document at \`/openapi.json\` and a browsable UI at \`/docs\`; ` +
      'errors, paging, idempotency and the live channel are explained in the [API guide](../api.md).',
    table(['route', 'what', 'group'], index),
    ...tags.flatMap((t) => [`## ${t}`, ...byTag.get(t)!]),
    '## Schemas',
    ...schemas,
  ]);
}

/** The whole page, from the served document. */
export async function renderRestReference(): Promise<string> {
  return renderRestReferenceOf(await servedOpenApiDocument());
}
