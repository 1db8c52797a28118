/** Shadow screen (placeholder until built). */
export function Shadow() {
  return <h1>Shadow</h1>;
}
