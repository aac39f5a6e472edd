/** Whether a text is an absolute http(s) URL with a host: the only kind of address Gantry fetches or links (pure). */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}
