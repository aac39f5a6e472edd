/**
 * Structured logging: one JSON line per event on stdout, or a short readable line (GANTRY_LOG_FORMAT; by default
 * on a terminal and in the demo). Callers pass fields, never secrets: keys are logged by id, tokens not at all.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
/** The setting: `auto` is text on a terminal, JSON otherwise. */
export type LogFormatSetting = "auto" | "json" | "text";

/** Whether lines are written as text (true) or JSON, for a setting and whether stdout is a terminal. */
export function textLogs(setting: LogFormatSetting, terminal = process.stdout.isTTY === true): boolean {
  return setting === "text" || (setting === "auto" && terminal);
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  enabled(level: LogLevel): boolean;
  /**
   * The same line for a hot caller that serialises its fields itself (the request log, once per request):
   * `members` is the inside of a JSON object (`"a":1,"b":"x"`), valid JSON that the caller vouches for.
   */
  members(level: LogLevel, msg: string, members: string): void;
}

/**
 * Log lines are buffered and written together, at most FLUSH_MS after the first one or once FLUSH_BYTES have
 * gathered, through Bun's FileSink for stdout: one write for many requests instead of one per request, and
 * none of process.stdout's stream machinery (which cost a quarter of /v1/models' throughput). Whatever is
 * still buffered is handed over when the process exits.
 */
const FLUSH_MS = 25;
const FLUSH_BYTES = 64 * 1024;

interface BufferedStdout {
  /** One log line, buffered. */
  line(line: string): void;
  /** Text for a reader (a banner, a generated token), written at once after every line logged before it. */
  text(text: string): void;
}

function bufferedStdout(): BufferedStdout {
  const sink = Bun.stdout.writer();
  let pending = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  // Once stdout is gone (the reader of a pipe exited: EPIPE), lines are dropped: there is no one left to tell,
  // and the server must go on serving.
  let gone = false;
  const lose = () => {
    gone = true;
    pending = "";
  };
  const write = (text: string) => {
    if (gone) return;
    try {
      sink.write(text);
      const done = sink.flush();
      if (done instanceof Promise) done.catch(lose);
    } catch {
      lose();
    }
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending === "") return;
    const text = pending;
    pending = "";
    write(text);
  };
  process.on("exit", flush);
  return {
    line(line) {
      if (gone) return;
      pending += line + "\n";
      if (pending.length >= FLUSH_BYTES) flush();
      else if (!timer) timer = setTimeout(flush, FLUSH_MS);
    },
    text(text) {
      if (gone) return;
      pending += text;
      flush();
    },
  };
}

/** Many lines share a millisecond: format its timestamp once. */
let isoMs = -1;
let isoText = "";
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

let sharedStdout: BufferedStdout | null = null;
const stdoutLine = (line: string) => (sharedStdout ??= bufferedStdout()).line(line);

/**
 * Writes text meant to be read (a banner, a generated token) to stdout after every log line logged before it:
 * through the log's own buffer, so the two never interleave and start-up lines do not land under it.
 */
export function printAfterLogs(text: string): void {
  (sharedStdout ??= bufferedStdout()).text(text);
}

/** A text line's field value: strings bare, anything else as JSON. */
function textValue(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * The longest a logged value may be, in characters. Many values come from callers (a model name, an id, an
 * upstream's error body, a URL); a log line must not grow with them: one 15 MB value per refused request fills a
 * disk in minutes. Every field of every line is held to this, whoever logs it.
 */
export const MAX_LOGGED_CHARS = 4096;

/** `text` cut to `max` characters, saying how much was left out. */
export function clip(text: string, max = MAX_LOGGED_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more chars)`;
}

/**
 * The fields with every value held to MAX_LOGGED_CHARS (objects by their JSON text). The same object when none is
 * longer: the usual line costs a look at each field and no copy.
 */
function boundedFields(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const k in fields) {
    const v = fields[k];
    let cut: string | null = null;
    if (typeof v === "string") {
      if (v.length > MAX_LOGGED_CHARS) cut = clip(v);
    } else if (v !== null && typeof v === "object") {
      const json = JSON.stringify(v) ?? "";
      if (json.length > MAX_LOGGED_CHARS) cut = clip(json);
    }
    if (cut !== null) (out ??= { ...fields })[k] = cut;
  }
  return out ?? fields;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = stdoutLine,
  /** Text lines instead of JSON; see textLogs(). */
  pretty = textLogs("auto"),
): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    if (fields !== undefined) fields = boundedFields(fields);
    const time = isoNow();
    if (pretty) {
      // Short: the time of day (UTC, as every time Gantry shows), the level, the message, the fields.
      const rest = fields ? Object.entries(fields).map(([k, v]) => (v === undefined ? "" : ` ${k}=${textValue(v)}`)).join("") : "";
      write(`${time.slice(11, 19)}Z ${lvl.toUpperCase().padEnd(5)} ${msg}${rest}`);
    } else {
      // The same line JSON.stringify({ time, level, msg, ...fields }) gives, without copying the fields.
      const head = `{"time":"${time}","level":"${lvl}","msg":${JSON.stringify(msg)}`;
      const rest = fields === undefined ? "{}" : JSON.stringify(fields);
      write(rest.length > 2 ? `${head},${rest.slice(1)}` : `${head}}`);
    }
  };
  /** `{"time":…,"level":…,"msg":…` of a message, whose quoting is done once per message, not per line. */
  const quoted = new Map<string, string>();
  const head = (lvl: LogLevel, msg: string) => {
    let q = quoted.get(msg);
    if (q === undefined) {
      q = JSON.stringify(msg);
      if (quoted.size < 256) quoted.set(msg, q);
    }
    return `{"time":"${isoNow()}","level":"${lvl}","msg":${q}`;
  };
  return {
    members(lvl, msg, members) {
      if (RANK[lvl] < min) return;
      if (pretty) emit(lvl, msg, JSON.parse(`{${members}}`));
      else write(members === "" ? `${head(lvl, msg)}}` : `${head(lvl, msg)},${members}}`);
    },
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (lvl) => RANK[lvl] >= min,
  };
}

export const silentLogger: Logger = createLogger("error", () => {}, false);
