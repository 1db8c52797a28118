/** ApiKeys screen (placeholder until built). */
export function ApiKeys() {
  return <h1>ApiKeys</h1>;
}
