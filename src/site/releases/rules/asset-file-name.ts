/** The name an asset is stored and offered under (pure): kept with the releases, which name their assets; downloads reuse it for Content-Disposition. */

/**
 * A file name safe to store and show: the last path segment only, no control characters, no leading dots
 * or spaces, at most 200 characters. "" when nothing usable is left (callers refuse it).
 */
export function sanitizeFileName(name: string): string {
  const lastSegment = name.split(/[/\\]/).pop() ?? "";
  const cleaned = lastSegment
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "")
    .replace(/^[\s.]+/, "")
    .trim();
  return [...cleaned].slice(0, 200).join("");
}
