/**
 * Validation of capability `input_schema` documents (contract §2.8: a JSON Schema object) with Ajv's
 * `validateSchema`: the document is checked against its draft's meta-schema and never compiled,
 * so an untrusted schema runs no generated code (Ajv treats compiled schemas as trusted code).
 *
 * Drafts: 2020-12 (the default when `$schema` is absent), 2019-09 and draft-07, chosen by the
 * document's `$schema` (with or without the trailing `#`); another `$schema` is refused. Size and
 * nesting are capped before Ajv sees the document (its meta-schema validation recurses per level).
 */
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { badRequest } from '../../lib/errors.js';

/** Largest accepted `input_schema`, in characters of its JSON text. */
export const MAX_SCHEMA_CHARS = 64 * 1024;
/** Deepest accepted nesting of objects and arrays in an `input_schema`. */
export const MAX_SCHEMA_DEPTH = 32;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
type Validator = Ajv | Ajv2019 | Ajv2020;
const VALIDATORS = new Map<string, Validator>([
  [DRAFT_2020, new Ajv2020()],
  ['https://json-schema.org/draft/2019-09/schema', new Ajv2019()],
  ['http://json-schema.org/draft-07/schema', new Ajv()],
]);

/** Nesting depth of a JSON value (iterative, so a hostile document cannot overflow the stack). */
function depthOf(value: unknown, cap: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    max = Math.max(max, d);
    if (max > cap) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

const describe = (errors: ErrorObject[] | null | undefined, ajv: Validator) => ajv.errorsText(errors, { dataVar: 'input_schema' });

/**
 * Check that `schema` is a valid JSON Schema document (see the module comment).
 * @throws 400 naming the problem: not an object, too large or too deep, unsupported `$schema`,
 *   or the meta-schema's first violation (e.g. "input_schema/type must be equal to one of the
 *   allowed values").
 */
export function assertJsonSchema(schema: unknown): void {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw badRequest('input_schema must be a JSON Schema object');
  // Depth first: it is iterative, and it bounds the recursion of JSON.stringify and Ajv after it.
  if (depthOf(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) throw badRequest(`input_schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) throw badRequest(`input_schema is larger than ${MAX_SCHEMA_CHARS} characters`);
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared !== undefined && typeof declared !== 'string') throw badRequest('input_schema/$schema must be a string');
  const ajv = VALIDATORS.get(declared === undefined ? DRAFT_2020 : declared.replace(/#$/, ''));
  if (!ajv) throw badRequest(`input_schema/$schema is not supported: use ${[...VALIDATORS.keys()].join(', ')} (or omit it for 2020-12)`);
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema) as boolean;
  } catch (err) {
    throw badRequest(`input_schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
  if (!valid) throw badRequest(`input_schema is not a valid JSON Schema: ${describe(ajv.errors, ajv)}`);
}
