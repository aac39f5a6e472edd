/**
 * The database's note of which mirror holds its files, as a meta value: written when the first file is stored
 * (or at start, for a database that had files before the note existed) and compared at every start, so an
 * instance started without the bucket, or with another one, is refused instead of answering 404 for every file.
 * Pure: the value's format, its comparison and the words that name a mirror.
 */
import type { MirrorLocation } from "../../releases/mirror";

/** The meta key of the note. */
export const MIRROR_RECORD_KEY = "mirror_location";

/** An endpoint as recorded: without credentials a URL might carry (the note is shown in messages). */
function cleanEndpoint(endpoint: string | null): string | null {
  if (!endpoint) return null;
  try {
    const url = new URL(endpoint);
    url.username = "";
    url.password = "";
    return url.toString().replace(/\/$/, "");
  } catch {
    return endpoint.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1");
  }
}

export function encodeMirrorLocation(location: MirrorLocation): string {
  if (location.kind === "filesystem") return JSON.stringify({ kind: "filesystem" });
  return JSON.stringify({ kind: "s3", bucket: location.bucket, endpoint: cleanEndpoint(location.endpoint) });
}

/** The recorded location, or null when the value is not one this binary wrote. */
export function parseMirrorLocation(value: string): MirrorLocation | null {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.kind === "filesystem") return { kind: "filesystem" };
  if (o.kind === "s3" && typeof o.bucket === "string" && o.bucket !== "") {
    return { kind: "s3", bucket: o.bucket, endpoint: typeof o.endpoint === "string" ? o.endpoint : null };
  }
  return null;
}

/**
 * The same mirror: the same kind and, for S3, the same bucket name. The endpoint is not compared: one bucket is
 * often reached by more than one address (an internal name, a trailing slash, http behind a proxy); it is named
 * in the refusal so an operator sees it.
 */
export function sameMirror(a: MirrorLocation, b: MirrorLocation): boolean {
  if (a.kind === "filesystem" || b.kind === "filesystem") return a.kind === b.kind;
  return a.bucket === b.bucket;
}

/** Names a mirror in a message, the way its settings would. */
export function describeMirror(location: MirrorLocation): string {
  if (location.kind === "filesystem") return "the data dir's mirror (no S3 bucket)";
  const endpoint = cleanEndpoint(location.endpoint);
  return `the S3 bucket "${location.bucket}"${endpoint ? ` at ${endpoint}` : ""}`;
}

/** Why a start (or a write) with `current` is refused when the database's files are in `recorded`. */
export function mirrorMismatchMessage(recorded: MirrorLocation, current: MirrorLocation): string {
  const hint =
    recorded.kind === "s3"
      ? `start with GANTRY_S3_BUCKET=${recorded.bucket}${recorded.endpoint ? ` and GANTRY_S3_ENDPOINT=${cleanEndpoint(recorded.endpoint)}` : ""} (and its keys)`
      : "start without GANTRY_S3_BUCKET, on the data dir that holds the files";
  return `this database's asset files are in ${describeMirror(recorded)}, but this instance uses ${describeMirror(current)}: ${hint}`;
}
