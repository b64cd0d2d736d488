/**
 * JSON Schema validation for the run input: the problems of an input against a schema as
 * one line each, and the same checks as a validator for the generated form (@rjsf/core's
 * `ValidatorType`), placing each error on its field. Built on @cfworker/json-schema, which
 * interprets schemas without generating code, so it runs under the console's content policy
 * (no `unsafe-eval`; Ajv-based validators compile schemas to functions and are refused).
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils';

/** The draft schemas are read as (the server's validator accepts the same documents). */
const DRAFT = '2020-12';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON pointer `#/a/0/b` → its segments, unescaped. */
function pointerSegments(pointer: string): string[] {
  const p = pointer.replace(/^#/, '');
  if (p === '' || p === '/') return [];
  return p
    .slice(1)
    .split('/')
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Segments as rjsf's property path (`.a[0].b`, `['odd key']`). */
function propertyOf(segments: readonly string[]): string {
  return segments.map((s) => (/^\d+$/.test(s) ? `[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `['${s.replace(/'/g, "\\'")}']`)).join('');
}

function at(doc: unknown, segments: readonly string[]): unknown {
  let cur = doc;
  for (const s of segments) cur = Array.isArray(cur) ? cur[Number(s)] : isObject(cur) ? cur[s] : undefined;
  return cur;
}

/** Summary errors of keywords whose own errors are listed separately. */
const WRAPPERS = new Set(['properties', 'items', 'prefixItems', 'allOf', 'additionalProperties', '$ref', 'unevaluatedProperties', 'dependentSchemas']);

/**
 * `data` checked against `schema` (rooted at `root` for `$ref`s), as rjsf errors: one per
 * failed keyword on the field it is about — a missing required member on that member.
 */
export function schemaErrors(schema: unknown, data: unknown, root: unknown = schema): RJSFValidationError[] {
  if (!isObject(schema)) return [];
  const full = isObject(root) && root !== schema ? { ...pickDefs(root), ...schema } : schema;
  let units: OutputUnit[];
  try {
    units = new Validator(full as Schema, DRAFT, false).validate(data === undefined ? {} : data).errors;
  } catch (err) {
    return [{ name: 'schema', message: `the schema cannot be used: ${(err as Error).message}`, property: '', stack: `the schema cannot be used: ${(err as Error).message}` }];
  }
  // the validator reports a required list once per absent member: each list is read once
  const seenRequired = new Set<string>();
  return units.flatMap((u): RJSFValidationError[] => {
    if (WRAPPERS.has(u.keyword)) return [];
    const where = pointerSegments(u.instanceLocation);
    if (u.keyword === 'required') {
      // the keyword's own list says which members are required; the ones absent are the errors
      const required = at(full, pointerSegments(u.keywordLocation));
      const value = at(data, where);
      if (!Array.isArray(required)) {
        // reached through a $ref: the list is elsewhere, the error stays on the object
        const property = propertyOf(where);
        return [{ name: 'required', message: u.error, property, schemaPath: u.keywordLocation, stack: `${property || 'input'}: ${u.error}` }];
      }
      const id = `${u.keywordLocation} ${u.instanceLocation}`;
      if (seenRequired.has(id)) return [];
      seenRequired.add(id);
      const missing = required.filter((k): k is string => typeof k === 'string' && !(isObject(value) && k in value));
      return missing.map((k) => {
        const property = propertyOf([...where, k]);
        return { name: 'required', message: 'is required', property, schemaPath: u.keywordLocation, params: { missingProperty: k }, stack: `${property || 'input'} is required` };
      });
    }
    const property = propertyOf(where);
    return [{ name: u.keyword, message: u.error, property, schemaPath: u.keywordLocation, stack: `${property || 'input'}: ${u.error}` }];
  });
}

function pickDefs(root: Json): Json {
  const out: Json = {};
  if (root.$defs !== undefined) out.$defs = root.$defs;
  if (root.definitions !== undefined) out.definitions = root.definitions;
  return out;
}

/** Each schema's problems with `input`, one line each (`where: path message`). */
export function inputProblems(input: unknown, schemas: Array<[string, unknown]>): string[] {
  return schemas.flatMap(([where, schema]) => schemaErrors(schema, input).map((e) => `${where}: ${e.stack}`));
}

/** The generated form's validator. */
export const formValidator: ValidatorType = {
  validateFormData(formData: unknown, schema: RJSFSchema, customValidate?: CustomValidator, transformErrors?: ErrorTransformer, uiSchema?: UiSchema): ValidationData<unknown> {
    let errors = schemaErrors(schema, formData);
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    const data: ValidationData<unknown> = { errors, errorSchema: toErrorSchema(errors) };
    if (!customValidate) return data;
    const own = unwrapErrorHandler(customValidate(formData, createErrorHandler(formData), uiSchema));
    return validationDataMerge(data, own);
  },
  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    return schemaErrors(schema, formData, rootSchema).length === 0;
  },
  rawValidation<Result = unknown>(schema: RJSFSchema, formData?: unknown) {
    return { errors: schemaErrors(schema, formData) as Result[] };
  },
};
