/** Conversations screen (placeholder until built). */
export function Conversations() {
  return <h1>Conversations</h1>;
}
