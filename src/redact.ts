/**
 * How secrets are shown to an operator (the settings line, error messages, sync reports): never any of their
 * characters. Pure: text in, text out.
 */
import { sha256Hex } from "./secrets";

/**
 * A secret's printable form: its length and the first 8 hex digits of its SHA-256, enough to tell two apart (or
 * to check which one a server runs with: `printf %s "$TOKEN" | sha256sum`), none of its characters. A short
 * secret shows its length only: a 32-bit hash could be matched against every short string.
 */
export function redact(secret: string): string {
  if (!secret) return "";
  if (secret.length <= 12) return `***(${secret.length} chars)`;
  return `***(${secret.length} chars, sha256 ${sha256Hex(secret).slice(0, 8)})`;
}

/** A URL's start: `scheme://`. */
const URL_START = /\b[a-z][a-z0-9+.-]*:\/\//gi;
/** What ends a URL written in running text or inside JSON: white space, quotes, angle brackets. */
const URL_END = /[\s"'<>`]/;

/**
 * Credentials written into URLs anywhere in `text` (`https://user:pass@host`, `https://TOKEN@host`), hidden: the
 * whole user-info becomes `***`, so the scheme, host and path stay readable.
 *
 * Operators paste passwords unencoded, so a password may hold `/`, `?`, `#` or `@`, which a URL parser takes for
 * the end of the host (or fails on). The user-info is therefore taken to run to the URL's last `@` whenever
 * its authority (what follows `://` up to the first `/`, `?` or `#`) holds an `@` or a `:`: a user name, a
 * password or its start. A host:port whose path holds an `@` is hidden too; showing less is the safe mistake.
 * A URL with no `:` or `@` before its first `/` has no credentials that can be told from a path (an `@` in a
 * path, as in a release tag `pkg@1.2.3`, is kept).
 */
export function redactUrlCredentials(text: string): string {
  let out = "";
  let from = 0;
  for (const m of text.matchAll(URL_START)) {
    const start = m.index + m[0].length;
    if (start < from) continue;
    let end = start;
    while (end < text.length && !URL_END.test(text[end]!)) end++;
    const rest = text.slice(start, end);
    const at = rest.lastIndexOf("@");
    if (at < 0) continue;
    const authorityEnd = rest.search(/[/?#]/);
    const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
    if (!/[@:]/.test(authority)) continue;
    out += text.slice(from, start) + "***";
    from = start + at;
  }
  return out + text.slice(from);
}

/**
 * A URL setting whose password is secret: its credentials hidden; a value that is not even shaped like a URL
 * shows as a secret does.
 */
export function redactUrlPassword(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return redact(url);
  return redactUrlCredentials(url);
}
