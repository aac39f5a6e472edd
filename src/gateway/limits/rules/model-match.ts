/**
 * Model names: which ones a request may carry, and whitelist/blacklist matching (exact ids and `*` globs,
 * compiled once per key).
 *
 * A name is checked before anything reads it (admission, logs, error messages): a deny list is only as good as
 * the one spelling it is compared with. So a name is ASCII letters, digits and `. _ - : / @ +`, at most
 * MAX_MODEL_NAME characters, with no empty, `.` or `..` segment between slashes: no look-alike letters
 * (Cyrillic `о`, fullwidth forms), no spaces around it, no path tricks (`gpt-4.1-mini/../gpt-5.4` matching the
 * allow glob `gpt-4.1-mini*`). Letter case is not a spelling the lists can be bypassed with either: names and
 * patterns are compared in lower case, so `GPT-5.4` meets `--deny-models 'gpt-5*'` whatever case the upstream
 * honours.
 */
export type ModelMatcher = (model: string) => boolean;

export const MAX_MODEL_NAME = 256;

const MODEL_CHARS = /^[A-Za-z0-9._:/@+-]+$/;
const BAD_SEGMENT = /(^|\/)(\.{1,2})?(\/|$)/;

/** Why a model name is refused, or null when it is one the gateway takes. */
export function modelNameProblem(model: string): string | null {
  if (model.length === 0) return "is empty";
  if (model.length > MAX_MODEL_NAME) return `is longer than ${MAX_MODEL_NAME} characters`;
  if (!MODEL_CHARS.test(model)) return "may hold only ASCII letters, digits and . _ - : / @ +";
  if (BAD_SEGMENT.test(model)) return "may not have an empty, '.' or '..' part between slashes";
  return null;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*");
  return new RegExp(`^${escaped}$`);
}

export function compileModelList(patterns: readonly string[]): ModelMatcher {
  const lower = patterns.map((p) => p.toLowerCase());
  const exact = new Set(lower.filter((p) => !p.includes("*")));
  const globs = lower.filter((p) => p.includes("*")).map(globToRegExp);
  if (globs.length === 0) return (m) => exact.has(m.toLowerCase());
  return (m) => {
    const name = m.toLowerCase();
    return exact.has(name) || globs.some((g) => g.test(name));
  };
}

/** Whether a key with this mode and list may use `model`. No mode means every model is allowed. */
export function compileModelPermission(mode: "allow" | "deny" | null, patterns: readonly string[]): ModelMatcher {
  if (mode === null) return () => true;
  const matches = compileModelList(patterns);
  return mode === "allow" ? matches : (m) => !matches(m);
}
