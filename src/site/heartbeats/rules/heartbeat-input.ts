/**
 * POST /api/v1/client/heartbeat input rules (pure): where the client id comes from, which fields are read,
 * their bounds and normalisation, and how heartbeats of one batch collapse into one row per client.
 */
import { AppError } from "../../../errors";
import { normalizeLocale } from "../../announcements/rules/announcements";
import { normalizeVersion, parseVersion } from "../../releases/rules/versions";

/** The spec's recommended report interval and online window (site-api.md, Limits). */
export const HEARTBEAT_INTERVAL_SECONDS = 60;
export const ONLINE_WINDOW_SECONDS = 300;

/** A heartbeat is a few short strings; 16 KiB leaves room for clients that send extra fields we ignore. */
export const HEARTBEAT_MAX_BODY_BYTES = 16 * 1024;

export const CLIENT_ID_HEADER = "x-app-client-id";
export const CLIENT_ID_MAX_LENGTH = 128;

/** Longest accepted value per field (characters, after trimming). Longer values are refused with a 400. */
export const HEARTBEAT_FIELD_LIMITS = {
  app: 128,
  version: 64,
  platform: 32,
  arch: 32,
  runtime: 64,
  // RFC 5646: implementations should handle tags of at least 35 characters.
  locale: 35,
} as const;

export type HeartbeatField = keyof typeof HEARTBEAT_FIELD_LIMITS;
export const HEARTBEAT_FIELDS = Object.keys(HEARTBEAT_FIELD_LIMITS) as HeartbeatField[];

/** One received heartbeat. A field is null when the client did not send it: the stored value is kept then. */
export type HeartbeatRecord = { clientId: string; at: number } & Record<HeartbeatField, string | null>;

function bad(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

// Visible ASCII only: ids are generated tokens (UUIDs and the like), and this keeps them safe to print.
const CLIENT_ID_RE = /^[!-~]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

function checkClientId(value: string, param: string): string {
  if (value.length > CLIENT_ID_MAX_LENGTH) throw bad(param, `The client id is longer than ${CLIENT_ID_MAX_LENGTH} characters.`);
  if (!CLIENT_ID_RE.test(value)) throw bad(param, "The client id may contain only visible ASCII characters (no spaces).");
  return value;
}

/**
 * The header is the preferred carrier (spec): when both are given the header wins, even if they differ.
 * An empty header counts as absent; a malformed one is refused rather than silently replaced by the body's.
 */
export function resolveClientId(header: string | null, body: Record<string, unknown>): string {
  const h = header?.trim() ?? "";
  if (h !== "") return checkClientId(h, "X-App-Client-ID");
  const b = body.clientId;
  if (b !== undefined && b !== null && typeof b !== "string") throw bad("clientId", "'clientId' must be a string.");
  const v = typeof b === "string" ? b.trim() : "";
  if (v === "") {
    throw new AppError("missing_client_id", "A heartbeat needs a client id: send the X-App-Client-ID header (preferred) or 'clientId' in the body.", {
      param: "X-App-Client-ID",
    });
  }
  return checkClientId(v, "clientId");
}

/** Lowercased where clients disagree on case only (`Windows`/`windows`), so distributions do not split. */
const LOWERCASE = new Set<HeartbeatField>(["platform", "arch", "runtime"]);

function readField(body: Record<string, unknown>, field: HeartbeatField): string | null {
  const raw = body[field];
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string") throw bad(field, `'${field}' must be a string.`);
  const v = raw.trim();
  const max = HEARTBEAT_FIELD_LIMITS[field];
  if (v.length > max) throw bad(field, `'${field}' is longer than ${max} characters.`);
  if (CONTROL_RE.test(v)) throw bad(field, `'${field}' contains control characters.`);
  if (v === "") return "";
  if (field === "locale") {
    const tag = normalizeLocale(v);
    if (!tag) throw bad("locale", `'locale' must be a language tag (e.g. zh-CN), got '${v}'.`);
    return tag;
  }
  if (field === "version") {
    // Versions are compared and grouped by the same rules as releases (contract: dotted numeric), so a client
    // reporting "banana" would only pollute the distribution.
    if (!parseVersion(v)) throw bad("version", `'version' must be a dotted numeric version (e.g. 1.2.3), got '${v.slice(0, 64)}'.`);
    return normalizeVersion(v);
  }
  return LOWERCASE.has(field) ? v.toLowerCase() : v;
}

/**
 * Every field besides the client id is optional: a partial record still counts the client as online, and
 * missing fields keep what the client reported before. Unknown fields are ignored (newer clients may send more)
 * and never stored. The time is the server's (`now`), never the client's.
 */
export function parseHeartbeat(header: string | null, body: Record<string, unknown>, now: number): HeartbeatRecord {
  const clientId = resolveClientId(header, body);
  const record = { clientId, at: now } as HeartbeatRecord;
  for (const f of HEARTBEAT_FIELDS) record[f] = readField(body, f);
  return record;
}

/** One client's row after a batch: earliest and latest time, fields from the latest report that had them. */
export type MergedHeartbeat = HeartbeatRecord & { firstAt: number; count: number };

/** Collapses a batch to one entry per client id (so a batch writes each row once), in arrival order. */
export function mergeHeartbeats(records: readonly HeartbeatRecord[]): MergedHeartbeat[] {
  const byId = new Map<string, MergedHeartbeat>();
  for (const r of records) {
    const m = byId.get(r.clientId);
    if (!m) {
      byId.set(r.clientId, { ...r, firstAt: r.at, count: 1 });
      continue;
    }
    m.count += 1;
    m.firstAt = Math.min(m.firstAt, r.at);
    if (r.at >= m.at) {
      m.at = r.at;
      for (const f of HEARTBEAT_FIELDS) if (r[f] !== null) m[f] = r[f];
    } else {
      for (const f of HEARTBEAT_FIELDS) if (m[f] === null) m[f] = r[f];
    }
  }
  return [...byId.values()];
}

/** The reply to an acknowledged heartbeat (200): it is stored, and when to send the next one. */
export interface HeartbeatReply {
  ok: true;
  nextIntervalSeconds: number;
  onlineWindowSeconds: number;
}

export function heartbeatReply(): HeartbeatReply {
  return { ok: true, nextIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS, onlineWindowSeconds: ONLINE_WINDOW_SECONDS };
}
