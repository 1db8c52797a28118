/** Audit screen (placeholder until built). */
export function Audit() {
  return <h1>Audit</h1>;
}
