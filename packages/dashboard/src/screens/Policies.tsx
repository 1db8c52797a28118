/** Policies screen (placeholder until built). */
export function Policies() {
  return <h1>Policies</h1>;
}
