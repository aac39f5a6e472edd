/**
 * Proxy fallback of `/dl/{token}`: an asset that is not mirrored but has an upstream address is streamed
 * from there (never buffered), and the first complete pass is written into the mirror (pull-through:
 * download-pull-through.ts), after which the asset is served from the mirror with its SHA-256 known.
 *
 * Decisions where the issue is silent:
 * - One upstream request per caller request, and never more bytes read than the file has. A single range is
 *   one ranged request. A multi-range request is one ranged request covering the span of its ranges, and the
 *   parts are cut from that one stream (code hosts answer multi-range requests with 501, and an upstream that
 *   ignores Range would otherwise send the whole file once per part). Parts are therefore sent in ascending
 *   order (overlapping ones merged), each with its Content-Range, a documented departure from RFC 9110's
 *   "SHOULD keep the order asked for".
 * - Size known (from publish, sync or an earlier answer): ranges are judged locally (416 without asking the
 *   upstream), HEAD is answered from what we know, and an upstream that ignores a Range (200) is skipped to the
 *   offset here and read no further than the range's end.
 * - Size unknown (a `NAME=URL` asset never fetched): HEAD asks the upstream with a HEAD (never a GET); once it
 *   tells the length, the request is answered as for a known size. A single range is passed on and the
 *   upstream's answer checked: a 206 must carry the Content-Range the range asked for (else 502); a 200 that
 *   ignored the Range is skipped to the offset and answered 206 when it declares its length, and answered
 *   whole (200) when it does not. A multi-range request is answered with the whole file (RFC 9110 lets a
 *   server ignore Range). The first answer that reveals the size records it on the asset.
 * - Bun 1.4 sends every streamed body chunked and drops our Content-Length (oven-sh/bun#10507), so a
 *   proxied GET carries no length on the wire; HEAD answers do, and the byte counts are still enforced here.
 * - The upstream gets no credentials and no client headers other than the range: the address must be
 *   publicly fetchable. An upstream failure is a 502 whose text is one of a fixed few: never the address, a
 *   host name or a redirect target.
 */
import { AppError, errorResponse } from "../../errors";
import { contentTypeFor } from "./rules/download-headers";
import { DownloadFetchError, fetchFollowingRedirects } from "../fetch/download-fetch";
import { multipartByteranges, exactly, streamFrom } from "./download-multipart";
import { pullThrough, type PullThrough } from "./download-pull-through";
import {
  baseDownloadHeaders,
  goneResponse,
  notSatisfiable,
  rangeFor,
  type DownloadHooks,
  type DownloadMeta,
} from "./download-serve";
import { contentRange, parseRange, type ByteRange } from "./rules/range";

export interface ProxyTarget extends DownloadMeta {
  url: string;
  /** Bytes, when known. */
  size: number | null;
}

export interface ProxyOptions {
  fetch: typeof fetch;
  /** Records a size learnt from the upstream. */
  /** Records the size (resolves once stored; a GET does not wait for it, a HEAD does, so the next request sees it). */
  learnSize(size: number): Promise<void>;
  /** Where a complete pass is mirrored to (pull-through); without it the bytes are only passed on. */
  pullThrough?: PullThrough;
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

function upstream(url: string, request: Request, options: ProxyOptions, range?: string, method: "GET" | "HEAD" = "GET"): Promise<Response> {
  return fetchFollowingRedirects(url, {
    fetch: options.fetch,
    method,
    headers: range ? { ...UPSTREAM_HEADERS, range } : UPSTREAM_HEADERS,
    signal: request.signal,
  }).catch((err) => {
    // A fixed text: the fetch's own messages name hosts (a redirect's target among them).
    throw upstreamFailure(
      err instanceof DownloadFetchError && !err.unreachable
        ? /redirects/.test(err.message)
          ? "too many redirects"
          : "a redirect could not be followed"
        : "unreachable",
    );
  });
}

function upstreamFailure(why: string): AppError {
  return new AppError("upstream_unavailable", `The file is not mirrored and its upstream could not serve it (${why}).`);
}

async function drop(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => {});
}

/** The body of a complete pass, mirrored on the way when pull-through is on. */
function completePass(body: ReadableStream<Uint8Array>, size: number | null, o: ProxyOptions): ReadableStream<Uint8Array> {
  return o.pullThrough ? pullThrough(body, size, o.pullThrough) : body;
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
      await drop(res);
      throw upstreamFailure(`it now has ${declared} bytes instead of ${size}`);
    }
    if (!(await hooks.consume())) {
      await drop(res);
      return goneResponse();
    }
    hooks.count();
    return new Response(completePass(exactly(res.body, 0, size), size, o), { status: 200, headers });
  }

  if (range.ranges.length === 1) {
    const r = range.ranges[0];
    const headers = { ...base, "content-type": type, "content-length": String(r.end - r.start + 1), "content-range": contentRange(r.start, r.end, size) };
    if (head) return new Response(null, { status: 206, headers });
    const body = await fetchRange(request, t, r, o);
    hooks.count(r.end === size - 1);
    return new Response(body, { status: 206, headers });
  }

  // Ascending, so every part is cut from one forward pass over the span (parseRange merged any overlap).
  const parts = [...range.ranges].sort((a, b) => a.start - b.start);
  const span = { start: parts[0].start, end: parts[parts.length - 1].end };
  if (head) {
    const m = multipartByteranges(parts, size, type, () => new ReadableStream());
    m.body.cancel().catch(() => {});
    return new Response(null, { status: 206, headers: { ...base, "content-type": m.contentType, "content-length": String(m.contentLength) } });
  }
  const cursor = new Cursor(await fetchRange(request, t, span, o), span.start);
  const multipart = multipartByteranges(parts, size, type, (r) => cursor.take(r));
  hooks.count(span.end === size - 1);
  return new Response(multipart.body, { status: 206, headers: { ...base, "content-type": multipart.contentType, "content-length": String(multipart.contentLength) } });
}

/** Reads one stream forward, handing out ascending, non-overlapping slices of it and skipping the gaps. */
class Cursor {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private held: Uint8Array | null = null;

  constructor(body: ReadableStream<Uint8Array>, private pos: number) {
    this.reader = body.getReader();
  }

  take(r: ByteRange): ReadableStream<Uint8Array> {
    const self = this;
    async function* run(): AsyncGenerator<Uint8Array> {
      let skip = r.start - self.pos;
      let left = r.end - r.start + 1;
      while (left > 0) {
        const chunk = self.held ?? (await self.next());
        self.held = null;
        if (skip >= chunk.byteLength) {
          skip -= chunk.byteLength;
          self.pos += chunk.byteLength;
          continue;
        }
        const from = chunk.subarray(skip);
        self.pos += skip;
        skip = 0;
        const out = from.subarray(0, Math.min(left, from.byteLength));
        if (out.byteLength < from.byteLength) self.held = from.subarray(out.byteLength);
        left -= out.byteLength;
        self.pos += out.byteLength;
        yield out;
      }
    }
    return streamFrom(run());
  }

  private async next(): Promise<Uint8Array> {
    const { done, value } = await this.reader.read();
    if (done) throw new Error("the upstream ended before the last range");
    return value;
  }
}

/** One range from the upstream as exactly its bytes, whether the upstream answered 206 or ignored the Range. */
async function fetchRange(request: Request, t: ProxyTarget, r: ByteRange, o: ProxyOptions): Promise<ReadableStream<Uint8Array>> {
  const res = await upstream(t.url, request, o, `bytes=${r.start}-${r.end}`);
  const length = r.end - r.start + 1;
  if (res.status === 206) {
    const got = parseContentRange(res.headers.get("content-range"));
    if (!got || got.start !== r.start || got.end !== r.end) {
      await drop(res);
      throw upstreamFailure("it answered a different range");
    }
    return exactly(res.body, 0, length);
  }
  // Ignored the Range: skipped to the offset here, and read no further than the range's end.
  if (res.status === 200) return exactly(res.body, r.start, length);
  throw await rejectStatus(res);
}

/** A length the upstream declared, or null. */
function declaredLength(res: Response): number | null {
  const v = res.headers.get("content-length");
  return v !== null && /^\d{1,16}$/.test(v) ? Number(v) : null;
}

async function proxyUnknownSize(request: Request, t: ProxyTarget, hooks: DownloadHooks, o: ProxyOptions): Promise<Response> {
  const head = request.method === "HEAD";
  const base = baseDownloadHeaders(t);
  const type = contentTypeFor(t.fileType);

  if (head) {
    // A HEAD never starts a GET of a file that may be gigabytes.
    const res = await upstream(t.url, request, o, undefined, "HEAD");
    await drop(res);
    const size = res.status === 200 ? declaredLength(res) : null;
    if (size !== null) {
      await o.learnSize(size);
      return proxyKnownSize(request, t, size, hooks, o);
    }
    // Gone or failing upstream: 502. Anything else (no length, or HEAD refused: 405, 501, or the 403 of a storage
    // URL signed for GET only) is answered from what is known: the name and the type, no length.
    if (res.status === 404 || res.status === 410 || res.status >= 500) throw upstreamFailure(`it answered ${res.status}`);
    // Bun gives a body-less reply `Content-Length: 0`, which would say the file is empty; naming the transfer
    // coding the GET would use (chunked: no length known) is what keeps it off (RFC 9110 §9.3.2 allows it on HEAD).
    return new Response(null, { status: 200, headers: { ...base, "content-type": type, "transfer-encoding": "chunked" } });
  }

  const rangeHeader = request.headers.get("range");
  // Without a size, only a single well-formed spec is forwarded; anything else is answered whole.
  const single = rangeHeader && /^\s*bytes\s*=\s*(\d+-\d*|-\d+)\s*$/i.test(rangeHeader) ? rangeHeader.replace(/\s+/g, "") : undefined;

  const res = await upstream(t.url, request, o, single);
  if (res.status === 416) {
    await drop(res);
    const total = /\*\/(\d+)/.exec(res.headers.get("content-range") ?? "")?.[1];
    if (total) {
      void o.learnSize(Number(total));
      return notSatisfiable(Number(total), base, head);
    }
    throw upstreamFailure("it refused the range");
  }
  if (res.status === 206 && single) {
    const got = parseContentRange(res.headers.get("content-range"));
    const declared = declaredLength(res);
    if (!got || !answersSpec(single, got) || (declared !== null && declared !== got.end - got.start + 1)) {
      await drop(res);
      throw upstreamFailure("it answered a different range");
    }
    if (got.size !== null) void o.learnSize(got.size);
    const length = got.end - got.start + 1;
    const headers = { ...base, "content-type": type, "content-length": String(length), "content-range": `bytes ${got.start}-${got.end}/${got.size ?? "*"}` };
    // Of a size still unknown, a range cannot be known to reach the end: not a download.
    hooks.count(got.size !== null && got.end === got.size - 1);
    return new Response(exactly(res.body, 0, length), { status: 206, headers });
  }
  if (res.status !== 200) throw await rejectStatus(res);

  const size = declaredLength(res);
  if (size !== null) void o.learnSize(size);
  if (single && size !== null) {
    // The upstream ignored the Range but told its length: the range is cut here, as for a known size.
    const r = parseRange(single, size);
    if (r.kind === "unsatisfiable") {
      await drop(res);
      return notSatisfiable(size, base, head);
    }
    if (r.kind === "ranges") {
      const { start, end } = r.ranges[0];
      hooks.count(end === size - 1);
      return new Response(exactly(res.body, start, end - start + 1), {
        status: 206,
        headers: { ...base, "content-type": type, "content-length": String(end - start + 1), "content-range": contentRange(start, end, size) },
      });
    }
  }
  const headers: Record<string, string> = { ...base, "content-type": type };
  if (size !== null) headers["content-length"] = String(size);
  if (!(await hooks.consume())) {
    await drop(res);
    return goneResponse();
  }
  hooks.count();
  if (!res.body) throw upstreamFailure("it sent no body");
  return new Response(completePass(size === null ? res.body : exactly(res.body, 0, size), size, o), { status: 200, headers });
}

/** Whether a 206's Content-Range is what the single spec `bytes=…` asked for (judged by the size when given). */
function answersSpec(spec: string, got: { start: number; end: number; size: number | null }): boolean {
  if (got.size !== null) {
    const want = parseRange(spec, got.size);
    return want.kind === "ranges" && want.ranges.length === 1 && want.ranges[0].start === got.start && want.ranges[0].end === got.end;
  }
  const m = /=(\d*)-(\d*)$/.exec(spec)!;
  if (m[1] === "") return got.end - got.start + 1 <= Number(m[2]);
  return got.start === Number(m[1]) && (m[2] === "" || got.end <= Number(m[2]));
}

async function rejectStatus(res: Response): Promise<AppError> {
  await drop(res);
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
