/** Agents screen (placeholder until built). */
export function Agents() {
  return <h1>Agents</h1>;
}
