/**
 * Request validation (design §7): one Ajv configuration (removeAdditional, useDefaults, formats)
 * in two flavours chosen per part of the request. Query strings, params and headers arrive as
 * text, so their values are coerced to the schema's types (`coerceTypes: 'array'`: `?limit=5` is a
 * number, `?type=a` a one-element array). A JSON body already carries its types and is never
 * coerced: `"x"` where an array is required, or `"5"` where a number is, is a 400.
 */
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import { lazyCompiled } from './lazy-schemas.js';

/** Ajv options shared by every part of the request; bodies override `coerceTypes` with `false`. */
export const AJV_OPTIONS = { coerceTypes: 'array', removeAdditional: true, useDefaults: true } as const;

type RouteDefinition = { httpPart?: string };

/**
 * A Fastify `schemaController.compilersFactory.buildValidator`: Fastify's own pooled Ajv compiler,
 * asked for one validator with the configured options and one without type coercion; each route
 * part is compiled by the one that fits it (body: no coercion), on first use (http/lazy-schemas.ts).
 */
export function partAwareValidatorFactory(): BuildCompilerFromPool {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options);
    const strict = pool(externalSchemas, { ...options, mode: undefined, customOptions: { ...options?.customOptions, coerceTypes: false } });
    // Fastify calls the compiler with a route definition ({schema, method, url, httpPart}), not a bare schema.
    return ((route: RouteDefinition) =>
      lazyCompiled(() => (route.httpPart === 'body' ? strict : coercing)(route as never) as (...args: never[]) => unknown, true)) as unknown as ReturnType<BuildCompilerFromPool>;
  };
}
