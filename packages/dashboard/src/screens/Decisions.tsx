/** Decisions screen (placeholder until built). */
export function Decisions() {
  return <h1>Decisions</h1>;
}
