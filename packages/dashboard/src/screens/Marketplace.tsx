/** Marketplace screen (placeholder until built). */
export function Marketplace() {
  return <h1>Marketplace</h1>;
}
