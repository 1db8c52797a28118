/** Settings screen (placeholder until built). */
export function Settings() {
  return <h1>Settings</h1>;
}
