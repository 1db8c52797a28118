/**
 * Route schemas compiled on first use (cold start): Fastify compiles every
 * route's validators (Ajv) and response serializers (fast-json-stringify) while the app gets
 * ready — hundreds of them, about a third of the service's start-up CPU. Wrapped here, each is
 * compiled the first time its route needs it; `compilePendingSchemas` compiles the rest, a few at
 * a time between other work, once the service listens (main.ts), so a schema that does not
 * compile still shows up in the log right after start, and tests can assert that all compile.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/**
 * Compilations not run yet, oldest first; weakly held, so that an app that is closed and dropped
 * (tests build many) does not stay alive through its uncompiled schemas.
 */
const pending = new Set<WeakRef<() => unknown>>();

/**
 * `compile` deferred: the returned function compiles on its first call (or in
 * {@link compilePendingSchemas}) and then calls the compiled function with the same arguments.
 * Ajv's `errors` are copied after each call (Fastify reads them from the function it was given),
 * and `schemaEnv` is set so that Fastify passes the parent object Ajv needs to coerce a root value.
 */
export function lazyCompiled<F extends (...args: never[]) => unknown>(compile: () => F, ajv: boolean): F {
  let compiled: F | undefined;
  const ensure = (): F => {
    if (!compiled) {
      compiled = compile();
      pending.delete(ref);
    }
    return compiled;
  };
  const ref = new WeakRef(ensure);
  pending.add(ref);
  const call = function (this: unknown, ...args: Parameters<F>): ReturnType<F> {
    const fn = ensure();
    const result = fn.apply(this, args) as ReturnType<F>;
    if (ajv) (call as unknown as { errors: unknown }).errors = (fn as unknown as { errors: unknown }).errors;
    return result;
  };
  if (ajv) Object.assign(call, { schemaEnv: true, errors: null });
  return call as unknown as F;
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/** A `schemaController.compilersFactory.buildSerializer`: Fastify's own (fast-json-stringify), compiled on first use. */
export function lazySerializerFactory(): SerializerFactory {
  const build = SerializerSelector();
  return ((externalSchemas: unknown, options: unknown) => {
    const compiler = (build as (...a: unknown[]) => (route: unknown) => (data: unknown) => string)(externalSchemas, options);
    return (route: unknown) => lazyCompiled(() => compiler(route), false);
  }) as unknown as SerializerFactory;
}

/** How many compilations are still deferred. */
export function pendingSchemaCount(): number {
  return pending.size;
}

/**
 * Compile every deferred schema now, `batch` at a time, yielding to the event loop between
 * batches so that requests are served meanwhile. Rejects with the first schema that fails (the
 * rest are still compiled).
 */
export async function compilePendingSchemas(batch = 20): Promise<void> {
  let first: unknown;
  while (pending.size > 0) {
    let n = 0;
    for (const ref of pending) {
      try {
        const ensure = ref.deref();
        if (ensure) ensure();
        else pending.delete(ref);
      } catch (err) {
        pending.delete(ref); // its route answers 500 and says why
        first ??= err;
      }
      if (++n >= batch) break;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (first !== undefined) throw first;
}
