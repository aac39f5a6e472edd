/** Model whitelist/blacklist matching: exact ids and `*` globs, compiled once per key. */
export type ModelMatcher = (model: string) => boolean;

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*");
  return new RegExp(`^${escaped}$`);
}

export function compileModelList(patterns: readonly string[]): ModelMatcher {
  const exact = new Set(patterns.filter((p) => !p.includes("*")));
  const globs = patterns.filter((p) => p.includes("*")).map(globToRegExp);
  if (globs.length === 0) return (m) => exact.has(m);
  return (m) => exact.has(m) || globs.some((g) => g.test(m));
}

/** Whether a key with this mode and list may use `model`. No mode means every model is allowed. */
export function compileModelPermission(mode: "allow" | "deny" | null, patterns: readonly string[]): ModelMatcher {
  if (mode === null) return () => true;
  const matches = compileModelList(patterns);
  return mode === "allow" ? matches : (m) => !matches(m);
}
