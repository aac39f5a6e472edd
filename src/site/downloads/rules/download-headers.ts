/** Header values of file downloads (pure): Content-Disposition, Content-Type, ETag and If-Range. */
import { sanitizeFileName } from "../../releases/rules/asset-file-name";

/**
 * `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266). The plain `filename` is an ASCII fallback with
 * quotes, backslashes, control characters and path separators replaced, so no client can be led to write
 * outside its download folder or to split the header; `filename*` carries the exact (sanitised) name.
 */
export function contentDisposition(name: string): string {
  const clean = sanitizeFileName(name) || "download";
  const ascii = clean
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]/g, "_")
    .replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(clean)}`;
}

/** RFC 5987 value-chars: encodeURIComponent leaves a few characters that are not attr-chars. */
function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const CONTENT_TYPES: Record<string, string> = {
  exe: "application/vnd.microsoft.portable-executable",
  msi: "application/x-msi",
  dmg: "application/x-apple-diskimage",
  pkg: "application/octet-stream",
  AppImage: "application/vnd.appimage",
  deb: "application/vnd.debian.binary-package",
  rpm: "application/x-rpm",
  zip: "application/zip",
  "tar.gz": "application/gzip",
  tgz: "application/gzip",
  "7z": "application/x-7z-compressed",
  json: "application/json",
  yml: "text/yaml; charset=utf-8",
  yaml: "text/yaml; charset=utf-8",
  txt: "text/plain; charset=utf-8",
};

/** By file type; anything unknown is a plain byte stream (never sniffed, never rendered inline). */
export function contentTypeFor(fileType: string): string {
  return CONTENT_TYPES[fileType] ?? "application/octet-stream";
}

/** Strong validator of a download: the digest of its bytes. null when the digest is not known yet. */
export function downloadEtag(sha256: string): string | null {
  return /^[0-9a-f]{64}$/.test(sha256) ? `"sha256-${sha256}"` : null;
}

/**
 * Whether a Range request may be honoured given `If-Range` (RFC 9110 §13.1.5): only when the header is
 * absent or equals our strong ETag exactly. A date or a weak tag never matches (we send no Last-Modified),
 * so the client gets the whole file instead of mixing parts of two versions.
 */
export function ifRangeAllows(ifRange: string | null, etag: string | null): boolean {
  if (ifRange === null) return true;
  return etag !== null && ifRange.trim() === etag;
}
