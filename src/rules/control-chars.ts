/**
 * Characters that are instructions to a terminal or a text renderer rather than text: C0 controls (NUL, BEL, ESC
 * starting ANSI sequences, …), DEL, C1 controls (U+009B is a one-character CSI on some terminals) and the
 * bidirectional overrides and isolates that reorder what is shown, and the Unicode line and paragraph separators. Names and titles refuse them all; a body,
 * which has lines, keeps tab, line feed and carriage return. Pure.
 */

/** The class, as regular-expression source without the u flag (TypeBox patterns are compiled without it). */
export const CONTROL_CLASS = "\\x00-\\x1f\\x7f-\\x9f\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069";
const ANY_CONTROL = new RegExp(`[${CONTROL_CLASS}]`);
const CONTROL_BUT_LINES = new RegExp(`[${CONTROL_CLASS.replace("\\x00-\\x1f", "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f")}]`);

/** The first control character in `text` (tab and line breaks allowed when `lines`), as U+XXXX, or null. */
export function firstControl(text: string, lines = false): string | null {
  const m = (lines ? CONTROL_BUT_LINES : ANY_CONTROL).exec(text);
  return m ? `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}` : null;
}

/** Each control character written as an escape (`\x1b`, `\u202e`) that shows on a terminal and acts as nothing. */
export function escapeControls(text: string, lines = false): string {
  const re = new RegExp((lines ? CONTROL_BUT_LINES : ANY_CONTROL).source, "g");
  return text.replace(re, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * JSON text with the control characters JSON.stringify leaves as they are (DEL, C1, bidirectional controls)
 * written as \u escapes: the same JSON value, harmless on a terminal.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(/[\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
