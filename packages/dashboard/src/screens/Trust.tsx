/** Trust screen (placeholder until built). */
export function Trust() {
  return <h1>Trust</h1>;
}
