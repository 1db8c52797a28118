/** Telemetry screen (placeholder until built). */
export function Telemetry() {
  return <h1>Telemetry</h1>;
}
