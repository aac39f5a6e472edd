/**
 * A fake GitHub Releases API for sync tests, on two loopback origins like the real thing: the API
 * (`/repos/{o}/{r}/releases` with pagination and ETags, asset API URLs, browser download URLs) and a
 * storage host the asset URLs redirect to. An asset may bring its signature, served as the asset NAME.minisig.
 * Every request is recorded so tests can assert what was asked
 * (conditional headers, Accept, where the token went).
 */

export interface FakeAsset {
  id: number;
  name: string;
  bytes: Uint8Array<ArrayBuffer>;
  /** Asset API URL answers this status instead of redirecting (e.g. 500): a failing asset. */
  failStatus?: number;
  /** Bytes served directly by the API (200) instead of a redirect to the storage host. */
  direct?: boolean;
  /** Size advertised in the listing (default: bytes.length), to fake a truncated download. */
  advertisedSize?: number;
  /** Also advertise GitHub's `digest` field. */
  withDigest?: boolean;
  updatedAt?: string;
  /**
   * Its signature, listed and served as a release asset of its own named NAME.minisig (or NAME + `suffix`), as a
   * publisher uploads it beside the file.
   */
  signature?: { id: number; text: string; suffix?: ".minisig" | ".sig"; failStatus?: number };
}

/** The release assets as GitHub lists them: each asset, then its signature file when it has one. */
export function listedAssets(r: FakeRelease): FakeAsset[] {
  return r.assets.flatMap((a) =>
    a.signature
      ? [a, { id: a.signature.id, name: a.name + (a.signature.suffix ?? ".minisig"), bytes: new TextEncoder().encode(a.signature.text), failStatus: a.signature.failStatus }]
      : [a],
  );
}

export interface FakeRelease {
  id: number;
  tag: string;
  body?: string;
  draft?: boolean;
  prerelease?: boolean;
  publishedAt?: string;
  assets: FakeAsset[];
}

export interface RecordedRequest {
  host: "api" | "storage";
  method: string;
  path: string;
  headers: Record<string, string>;
  status: number;
}

export interface FakeGitHub {
  apiUrl: string;
  storageUrl: string;
  requests: RecordedRequest[];
  releases: FakeRelease[];
  /** Make the release list answer this status (e.g. 500, 502) until set back to null. */
  listFailure: number | null;
  /** Releases per page (GitHub honours per_page up to 100; the fake forces small pages to test pagination). */
  perPage: number;
  /** When set, the API requires `Authorization: Bearer <token>`. */
  token: string | null;
  downloadsOf(name: string): RecordedRequest[];
  clear(): void;
  stop(): Promise<void>;
}

function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

export function startFakeGitHub(options: { releases: FakeRelease[]; perPage?: number; token?: string; owner?: string; repo?: string }): FakeGitHub {
  const owner = options.owner ?? "acme";
  const repo = options.repo ?? "app";
  const state = {
    releases: options.releases,
    listFailure: null as number | null,
    perPage: options.perPage ?? 2,
    token: options.token ?? null,
  };
  const requests: RecordedRequest[] = [];
  const record = (host: "api" | "storage", req: Request, status: number) => {
    const url = new URL(req.url);
    requests.push({ host, method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), status });
  };
  const findAsset = (id: number) => {
    for (const r of state.releases) for (const a of listedAssets(r)) if (a.id === id) return { release: r, asset: a };
    return null;
  };

  const storage = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const m = /^\/blobs\/(\d+)$/.exec(new URL(req.url).pathname);
      const found = m ? findAsset(Number(m[1])) : null;
      // Signed storage URLs reject a second auth mechanism, as S3 does behind GitHub.
      const status = !found ? 404 : req.headers.get("authorization") ? 400 : 200;
      record("storage", req, status);
      if (status !== 200) return new Response("no", { status });
      return new Response(found!.asset.bytes, { headers: { "content-type": "application/octet-stream" } });
    },
  });
  const storageUrl = `http://127.0.0.1:${storage.port}`;

  const api = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const url = new URL(req.url);
      const base = url.origin;
      const reply = (status: number, body: BodyInit | null, headers: Record<string, string> = {}) => {
        record("api", req, status);
        return new Response(body, { status, headers });
      };
      if (state.token && req.headers.get("authorization") !== `Bearer ${state.token}` && !url.pathname.includes("/releases/download/")) {
        return reply(401, JSON.stringify({ message: "Bad credentials" }), { "content-type": "application/json" });
      }

      if (url.pathname === `/repos/${owner}/${repo}/releases`) {
        if (state.listFailure) return reply(state.listFailure, JSON.stringify({ message: "upstream trouble" }));
        const page = Math.max(1, Number(url.searchParams.get("page") ?? "1"));
        const perPage = state.perPage;
        const all = state.releases;
        const slice = all.slice((page - 1) * perPage, page * perPage);
        const body = JSON.stringify(
          slice.map((r) => ({
            id: r.id,
            tag_name: r.tag,
            name: r.tag,
            body: r.body ?? `Notes for ${r.tag}`,
            draft: r.draft ?? false,
            prerelease: r.prerelease ?? false,
            created_at: r.publishedAt ?? "2025-01-01T00:00:00Z",
            published_at: r.publishedAt ?? "2025-01-01T00:00:00Z",
            assets: listedAssets(r).map((a) => ({
              id: a.id,
              name: a.name,
              size: a.advertisedSize ?? a.bytes.length,
              state: "uploaded",
              content_type: "application/octet-stream",
              updated_at: a.updatedAt ?? "2025-01-01T00:00:00Z",
              url: `${base}/repos/${owner}/${repo}/releases/assets/${a.id}`,
              browser_download_url: `${base}/${owner}/${repo}/releases/download/${r.tag}/${encodeURIComponent(a.name)}`,
              ...(a.withDigest ? { digest: `sha256:${sha256Hex(a.bytes)}` } : {}),
            })),
          })),
        );
        // GitHub's list ETags are weak.
        const etag = `W/"${sha256Hex(new TextEncoder().encode(body)).slice(0, 20)}"`;
        const links: string[] = [];
        const last = Math.max(1, Math.ceil(all.length / perPage));
        if (page < last) links.push(`<${base}${url.pathname}?per_page=100&page=${page + 1}>; rel="next"`);
        links.push(`<${base}${url.pathname}?per_page=100&page=${last}>; rel="last"`);
        const headers = { etag, link: links.join(", "), "content-type": "application/json" };
        if (req.headers.get("if-none-match") === etag) return reply(304, null, headers);
        return reply(200, body, headers);
      }

      const assetMatch = /^\/repos\/[^/]+\/[^/]+\/releases\/assets\/(\d+)$/.exec(url.pathname);
      if (assetMatch) {
        const found = findAsset(Number(assetMatch[1]));
        if (!found) return reply(404, "{}");
        if (req.headers.get("accept") !== "application/octet-stream") return reply(415, JSON.stringify({ message: "metadata not faked" }));
        if (found.asset.failStatus) return reply(found.asset.failStatus, "boom");
        if (found.asset.direct) return reply(200, found.asset.bytes, { "content-type": "application/octet-stream" });
        return reply(302, null, { location: `${storageUrl}/blobs/${found.asset.id}` });
      }

      const dl = /^\/[^/]+\/[^/]+\/releases\/download\/[^/]+\/(.+)$/.exec(url.pathname);
      if (dl) {
        const name = decodeURIComponent(dl[1]);
        for (const r of state.releases) {
          const a = listedAssets(r).find((x) => x.name === name);
          if (!a) continue;
          if (a.failStatus) return reply(a.failStatus, "boom");
          return reply(302, null, { location: `${storageUrl}/blobs/${a.id}` });
        }
        return reply(404, "Not Found");
      }
      return reply(404, JSON.stringify({ message: "Not Found" }));
    },
  });

  const fake: FakeGitHub = {
    apiUrl: `http://127.0.0.1:${api.port}`,
    storageUrl,
    requests,
    get releases() {
      return state.releases;
    },
    set releases(v) {
      state.releases = v;
    },
    get listFailure() {
      return state.listFailure;
    },
    set listFailure(v) {
      state.listFailure = v;
    },
    get perPage() {
      return state.perPage;
    },
    set perPage(v) {
      state.perPage = v;
    },
    get token() {
      return state.token;
    },
    set token(v) {
      state.token = v;
    },
    downloadsOf(name) {
      const ids = new Set<number>();
      for (const r of state.releases) for (const a of listedAssets(r)) if (a.name === name) ids.add(a.id);
      return requests.filter(
        (q) =>
          (q.host === "storage" && [...ids].some((id) => q.path === `/blobs/${id}`)) ||
          (q.host === "api" && [...ids].some((id) => q.path.endsWith(`/releases/assets/${id}`))) ||
          (q.host === "api" && q.path.endsWith(`/download/${encodeURIComponent(name)}`) === true && q.path.includes("/releases/download/")),
      );
    },
    clear() {
      requests.length = 0;
    },
    async stop() {
      await api.stop(true);
      await storage.stop(true);
    },
  };
  return fake;
}

/** Deterministic sample bytes of a given size. */
export function bytesOf(seed: string, size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let x = [...seed].reduce((h, c) => (h * 33 + c.charCodeAt(0)) >>> 0, 5381);
  for (let i = 0; i < size; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
