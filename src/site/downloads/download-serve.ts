/**
 * Answers a `/dl/{token}` request from mirrored bytes: 200, 206 (one range, or multipart/byteranges), 416,
 * HEAD, If-Range. Responses are built on lazy Blob slices, so Bun sends them with sendfile(2).
 */
import { AppError, errorResponse } from "../../errors";
import { contentDisposition, contentTypeFor, downloadEtag, ifRangeAllows } from "./rules/download-headers";
import { exactly, multipartByteranges } from "./download-multipart";
import { contentRange, parseRange, unsatisfiedContentRange, type RangeResult } from "./rules/range";

/** What the handler is told to do at the moments that matter. */
export interface DownloadHooks {
  /** A complete GET is about to be answered; false = the link may not serve it (links are not spent today: true). */
  consume(): Promise<boolean>;
  /**
   * A GET is about to send bytes; `servesEnd` (default true) says whether they reach the file's last byte. Only
   * those count, once per client and file within a link's lifetime; recorded in the background, never delaying the bytes.
   */
  count(servesEnd?: boolean): void;
}

export interface DownloadMeta {
  name: string;
  fileType: string;
  /** Lowercase hex or "" (then no ETag is sent). */
  sha256: string;
}

/** Headers every download answer carries. */
export function baseDownloadHeaders(meta: DownloadMeta): Record<string, string> {
  const headers: Record<string, string> = {
    "accept-ranges": "bytes",
    "content-disposition": contentDisposition(meta.name),
    // The URL is single-use: no cache should keep it, and nothing should sniff or render it.
    "cache-control": "private, no-store",
    "x-content-type-options": "nosniff",
  };
  const etag = downloadEtag(meta.sha256);
  if (etag) headers.etag = etag;
  return headers;
}

/** Range decision for a file of known size, with If-Range applied first. */
export function rangeFor(request: Request, size: number, sha256: string): RangeResult {
  if (!ifRangeAllows(request.headers.get("if-range"), downloadEtag(sha256))) return { kind: "none" };
  return parseRange(request.headers.get("range"), size);
}

export function notSatisfiable(size: number, base: Record<string, string>, head: boolean): Response {
  const err = new AppError("range_not_satisfiable", `The requested range is outside the file (${size} bytes).`, { param: "range" });
  const headers = { ...base, "content-range": unsatisfiedContentRange(size) };
  return head ? new Response(null, { status: 416, headers }) : errorResponse(err, headers);
}

export function goneResponse(): Response {
  return errorResponse(
    new AppError("gone", "This download link has been used; request the download again from /api/v1/download/{assetId}."),
  );
}

/**
 * A body for the bytes of `blob`. A file of an object store (Bun's S3File) given to a Response as such would
 * answer with a redirect to a presigned URL, not with the bytes: it is streamed instead (ranged GETs for slices).
 * A local file is given as it is, so Bun sends it with sendfile(2).
 */
function bodyOf(blob: Blob): BodyInit {
  return typeof (blob as { presign?: unknown }).presign === "function" ? exactly(blob.stream(), 0, blob.size) : blob;
}

/**
 * `direct`, when given, may name a URL the client can fetch a complete download from itself (a presigned
 * object-store URL): a plain full GET is then answered with a redirect to it, after the download is counted,
 * as a streamed one would be. Everything else (HEAD, ranges, If-Range) is answered here,
 * so Range and If-Range keep Gantry's rules and its SHA-256 ETag.
 */
export async function serveFromMirror(
  request: Request,
  file: Blob,
  meta: DownloadMeta,
  hooks: DownloadHooks,
  direct?: () => Promise<string | null>,
): Promise<Response> {
  const head = request.method === "HEAD";
  const size = file.size;
  const base = baseDownloadHeaders(meta);
  const type = contentTypeFor(meta.fileType);
  const range = rangeFor(request, size, meta.sha256);

  if (range.kind === "unsatisfiable") return notSatisfiable(size, base, head);

  if (range.kind === "none") {
    const headers = { ...base, "content-type": type, "content-length": String(size) };
    if (head) return new Response(null, { status: 200, headers });
    hooks.count(true);
    // Only a request that asks for nothing but the whole file goes to the bucket: a Range Gantry ignored (malformed,
    // or a stale If-Range) would be applied there by other rules.
    const plain = !request.headers.has("range") && !request.headers.has("if-range");
    const url = plain ? await direct?.() : null;
    if (url) return new Response(null, { status: 302, headers: { location: url, "cache-control": "private, no-store" } });
    return new Response(bodyOf(file), { status: 200, headers });
  }

  if (range.ranges.length === 1) {
    const { start, end } = range.ranges[0];
    const headers = {
      ...base,
      "content-type": type,
      "content-length": String(end - start + 1),
      "content-range": contentRange(start, end, size),
    };
    if (head) return new Response(null, { status: 206, headers });
    hooks.count(end === size - 1);
    return new Response(bodyOf(file.slice(start, end + 1)), { status: 206, headers });
  }

  const multipart = multipartByteranges(range.ranges, size, type, (r) => file.slice(r.start, r.end + 1).stream());
  const headers = { ...base, "content-type": multipart.contentType, "content-length": String(multipart.contentLength) };
  if (head) {
    multipart.body.cancel().catch(() => {});
    return new Response(null, { status: 206, headers });
  }
  hooks.count(range.ranges.some((r) => r.end === size - 1));
  return new Response(multipart.body, { status: 206, headers });
}
