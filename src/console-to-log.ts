/**
 * What the runtime itself prints with console.* goes to the JSON log instead, so whatever collects the log reads
 * one format. Gantry's own code logs through the logger and never calls console; the lines this catches come from
 * Bun's drivers, e.g. bun:sql re-subscribing the change feed's LISTEN after the connection dropped
 * ("bun:sql LISTEN "gantry_changes" failed, retrying: Failed to connect"), which has no hook of its own.
 */
import { format } from "node:util";
import type { Logger } from "./log";

/** Lines known by their words: a message that says what happened, and the varying part as fields. */
const KNOWN: ReadonlyArray<{ pattern: RegExp; msg: string; fields: (m: RegExpExecArray) => Record<string, unknown> }> = [
  {
    pattern: /^bun:sql LISTEN (\S+) failed, retrying: ([\s\S]*)$/,
    msg: "PostgreSQL change listener lost its connection: retrying (changes are reloaded once it is back)",
    fields: (m) => ({ channel: m[1]!.replace(/^"|"$/g, ""), error: m[2]!.trim() }),
  },
];

/** One console line as a log line. */
export function consoleLine(log: Logger, level: "info" | "warn" | "error", args: unknown[]): void {
  const text = format(...args).trimEnd();
  for (const k of KNOWN) {
    const m = k.pattern.exec(text);
    if (m) return log[level === "info" ? "warn" : level](k.msg, k.fields(m));
  }
  log[level]("runtime message", { text });
}

/** From now on, console.log/info/warn/error in this process write log lines. For servers, not one-shot commands. */
export function routeConsoleToLog(log: Logger): void {
  console.log = (...args: unknown[]) => consoleLine(log, "info", args);
  console.info = (...args: unknown[]) => consoleLine(log, "info", args);
  console.warn = (...args: unknown[]) => consoleLine(log, "warn", args);
  console.error = (...args: unknown[]) => consoleLine(log, "error", args);
}
