/**
 * Proxy fallback of `/dl/{token}`: an asset that is not mirrored but has an upstream address is streamed
 * from there (never buffered). Single ranges are passed through; multi-range requests are split into one
 * upstream request per range and reassembled as multipart/byteranges, because code hosts such as GitHub
 * answer multi-range requests with 501.
 *
 * Decisions where the issue is silent:
 * - Size known (from publish or sync): ranges are judged locally (416 without asking the upstream), HEAD is
 *   answered from what we know, and an upstream that ignores a Range (200) is cut to the range here.
 * - Size unknown (a `NAME=URL` asset never fetched): a single range is passed through as sent; a
 *   multi-range request is answered with the whole file (RFC 9110 lets a server ignore Range), which counts
 *   as a complete GET. The first answer that reveals the size records it on the asset.
 * - Bun 1.4 sends every streamed body chunked and drops our Content-Length (oven-sh/bun#10507), so a
 *   proxied GET carries no length on the wire; HEAD answers do, and the byte counts are still enforced here.
 * - The upstream gets no credentials and no client headers other than the range: the address must be
 *   publicly fetchable. An upstream failure is a 502 that never echoes the address.
 */
import { AppError, errorResponse } from "../../errors";
import { contentTypeFor } from "./download-headers";
import { DownloadFetchError, fetchFollowingRedirects } from "./download-fetch";
import { multipartByteranges, exactly } from "./download-multipart";
import {
  baseDownloadHeaders,
  goneResponse,
  notSatisfiable,
  rangeFor,
  type DownloadHooks,
  type DownloadMeta,
} from "./download-serve";
import { contentRange, type ByteRange } from "./range";

export interface ProxyTarget extends DownloadMeta {
  url: string;
  /** Bytes, when known. */
  size: number | null;
}

export interface ProxyOptions {
  fetch: typeof fetch;
  /** Records a size learnt from the upstream. */
  learnSize(size: number): void;
}

const UPSTREAM_HEADERS = { accept: "application/octet-stream", "user-agent": "gantry-mirror" };

export async function serveFromUpstream(
  request: Request,
  target: ProxyTarget,
  hooks: DownloadHooks,
  options: ProxyOptions,
): Promise<Response> {
  try {
    return target.size === null
      ? await proxyUnknownSize(request, target, hooks, options)
      : await proxyKnownSize(request, target, target.size, hooks, options);
  } catch (err) {
    if (err instanceof AppError) return errorResponse(err);
    throw err;
  }
}

function upstream(url: string, request: Request, options: ProxyOptions, range?: string): Promise<Response> {
  return fetchFollowingRedirects(url, {
    fetch: options.fetch,
    headers: range ? { ...UPSTREAM_HEADERS, range } : UPSTREAM_HEADERS,
    signal: request.signal,
  }).catch((err) => {
    // Never the host: a public caller learns neither the address nor whether it exists.
    throw upstreamFailure(err instanceof DownloadFetchError && !err.unreachable ? err.message : "unreachable");
  });
}

function upstreamFailure(why: string): AppError {
  return new AppError("upstream_unavailable", `The file is not mirrored and its upstream could not serve it (${why}).`);
}

async function proxyKnownSize(request: Request, t: ProxyTarget, size: number, hooks: DownloadHooks, o: ProxyOptions): Promise<Response> {
  const head = request.method === "HEAD";
  const base = baseDownloadHeaders(t);
  const type = contentTypeFor(t.fileType);
  const range = rangeFor(request, size, t.sha256);

  if (range.kind === "unsatisfiable") return notSatisfiable(size, base, head);

  if (range.kind === "none") {
    const headers = { ...base, "content-type": type, "content-length": String(size) };
    if (head) return new Response(null, { status: 200, headers });
    const res = await upstream(t.url, request, o);
    if (res.status !== 200) throw await rejectStatus(res);
    const declared = res.headers.get("content-length");
    if (declared !== null && Number(declared) !== size) {
      await res.body?.cancel().catch(() => {});
      throw upstreamFailure(`it now has ${declared} bytes instead of ${size}`);
    }
    if (!(await hooks.consume())) {
      await res.body?.cancel().catch(() => {});
      return goneResponse();
    }
    hooks.count();
    return new Response(exactly(res.body, 0, size), { status: 200, headers });
  }

  if (range.ranges.length === 1) {
    const r = range.ranges[0];
    const headers = { ...base, "content-type": type, "content-length": String(r.end - r.start + 1), "content-range": contentRange(r.start, r.end, size) };
    if (head) return new Response(null, { status: 206, headers });
    const body = await fetchRange(request, t, r, o);
    hooks.count();
    return new Response(body, { status: 206, headers });
  }

  const multipart = multipartByteranges(range.ranges, size, type, (r) => fetchRange(request, t, r, o));
  const headers = { ...base, "content-type": multipart.contentType, "content-length": String(multipart.contentLength) };
  if (head) return new Response(null, { status: 206, headers });
  hooks.count();
  return new Response(multipart.body, { status: 206, headers });
}

/** One range from the upstream as exactly its bytes, whether the upstream answered 206 or ignored the Range. */
async function fetchRange(request: Request, t: ProxyTarget, r: ByteRange, o: ProxyOptions): Promise<ReadableStream<Uint8Array>> {
  const res = await upstream(t.url, request, o, `bytes=${r.start}-${r.end}`);
  const length = r.end - r.start + 1;
  if (res.status === 206) {
    const got = parseContentRange(res.headers.get("content-range"));
    if (!got || got.start !== r.start || got.end !== r.end) {
      await res.body?.cancel().catch(() => {});
      throw upstreamFailure("it answered a different range");
    }
    return exactly(res.body, 0, length);
  }
  if (res.status === 200) return exactly(res.body, r.start, length);
  throw await rejectStatus(res);
}

async function proxyUnknownSize(request: Request, t: ProxyTarget, hooks: DownloadHooks, o: ProxyOptions): Promise<Response> {
  const head = request.method === "HEAD";
  const base = baseDownloadHeaders(t);
  const type = contentTypeFor(t.fileType);
  const rangeHeader = request.headers.get("range");
  // Without a size, only a single well-formed spec is forwarded; anything else is answered whole.
  const single = rangeHeader && /^\s*bytes\s*=\s*(\d+-\d*|-\d+)\s*$/i.test(rangeHeader) ? rangeHeader.replace(/\s+/g, "") : undefined;

  const res = await upstream(t.url, request, o, single);
  if (res.status === 416) {
    await res.body?.cancel().catch(() => {});
    const total = /\*\/(\d+)/.exec(res.headers.get("content-range") ?? "")?.[1];
    if (total) {
      o.learnSize(Number(total));
      return notSatisfiable(Number(total), base, head);
    }
    throw upstreamFailure("it refused the range");
  }
  if (res.status === 206 && single) {
    const got = parseContentRange(res.headers.get("content-range"));
    if (!got) {
      await res.body?.cancel().catch(() => {});
      throw upstreamFailure("it sent a malformed Content-Range");
    }
    if (got.size !== null) o.learnSize(got.size);
    const length = got.end - got.start + 1;
    const headers = {
      ...base,
      "content-type": type,
      "content-length": String(length),
      "content-range": `bytes ${got.start}-${got.end}/${got.size ?? "*"}`,
    };
    if (head) {
      await res.body?.cancel().catch(() => {});
      return new Response(null, { status: 206, headers });
    }
    hooks.count();
    return new Response(exactly(res.body, 0, length), { status: 206, headers });
  }
  if (res.status !== 200) throw await rejectStatus(res);

  const declared = res.headers.get("content-length");
  const size = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  if (size !== null) o.learnSize(size);
  const headers: Record<string, string> = { ...base, "content-type": type };
  if (size !== null) headers["content-length"] = String(size);
  if (head) {
    await res.body?.cancel().catch(() => {});
    return new Response(null, { status: 200, headers });
  }
  if (!(await hooks.consume())) {
    await res.body?.cancel().catch(() => {});
    return goneResponse();
  }
  hooks.count();
  return new Response(size === null ? res.body : exactly(res.body, 0, size), { status: 200, headers });
}

async function rejectStatus(res: Response): Promise<AppError> {
  await res.body?.cancel().catch(() => {});
  return upstreamFailure(`it answered ${res.status}`);
}

export function parseContentRange(value: string | null): { start: number; end: number; size: number | null } | null {
  const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value ?? "");
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const size = m[3] === "*" ? null : Number(m[3]);
  if (end < start || (size !== null && end >= size)) return null;
  return { start, end, size };
}

