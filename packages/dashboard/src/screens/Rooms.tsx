/** Rooms screen (placeholder until built). */
export function Rooms() {
  return <h1>Rooms</h1>;
}
