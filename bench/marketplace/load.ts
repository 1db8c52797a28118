/**
 * Load generator of bench/marketplace (a separate Node process, forked by run.ts): `clients`
 * concurrent keep-alive HTTP clients (fetch) send `method url` with `headers` and, when `bodies`
 * is given, the next JSON body of that list (cycled), closed loop (each client sends its next
 * request when the previous one is answered), for `warmupMs` + `durationMs`. A request counts
 * when it is answered with `expectStatus`; the result has the requests answered inside the
 * measured window, their latency, and every success (warm-up included) for the row-count check.
 */

/** What run.ts sends. */
export interface HttpLoadSpec {
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** JSON bodies, cycled over all clients; absent: no body. */
  bodies?: string[];
  expectStatus: number;
  clients: number;
  warmupMs: number;
  durationMs: number;
}

/** What it answers. */
export interface HttpLoadResult {
  /** Requests answered `expectStatus` inside the measured window. */
  requests: number;
  measuredMs: number;
  /** Every request answered `expectStatus`, warm-up included. */
  totalOk: number;
  errors: number;
  firstError: string | null;
  /** Latency of the measured requests, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** CPU the load generator used in the measured window, ms. */
  clientCpuMs: number;
}

async function run(spec: HttpLoadSpec): Promise<HttpLoadResult> {
  const headers = { ...spec.headers, ...(spec.bodies ? { 'content-type': 'application/json' } : {}) };
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const end = measureFrom + spec.durationMs;
  const latencies: number[] = [];
  let totalOk = 0;
  let errors = 0;
  let firstError: string | null = null;
  let next = 0;
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  const startCpu = setTimeout(() => (cpuAtStart = process.cpuUsage()), spec.warmupMs);
  let cpuMs = NaN;
  const stopCpu = setTimeout(() => {
    if (cpuAtStart) {
      const u = process.cpuUsage(cpuAtStart);
      cpuMs = (u.user + u.system) / 1000;
    }
  }, spec.warmupMs + spec.durationMs);
  const client = async () => {
    while (performance.now() < end) {
      const body = spec.bodies ? spec.bodies[next++ % spec.bodies.length] : undefined;
      const t = performance.now();
      try {
        const res = await fetch(spec.url, { method: spec.method, headers, ...(body !== undefined ? { body } : {}) });
        const text = await res.text();
        if (res.status !== spec.expectStatus) throw new Error(`HTTP ${res.status} ${text.slice(0, 300)}`);
        const done = performance.now();
        totalOk++;
        if (done >= measureFrom && done <= end) latencies.push(done - t);
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: spec.clients }, client));
  clearTimeout(startCpu);
  clearTimeout(stopCpu);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    measuredMs: spec.durationMs,
    totalOk,
    errors,
    firstError,
    p50: q(0.5),
    p90: q(0.9),
    p99: q(0.99),
    max: latencies.at(-1) ?? NaN,
    clientCpuMs: cpuMs,
  };
}

process.once('message', (m: { spec: HttpLoadSpec }) => {
  run(m.spec).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (err: unknown) => process.send!({ error: String(err) }, () => process.exit(1)),
  );
});
