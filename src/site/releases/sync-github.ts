/**
 * Reading GitHub Releases (or a compatible API): every page of `GET /repos/{owner}/{repo}/releases`
 * (`per_page=100`, following `Link: rel="next"`), each page asked conditionally with the ETag remembered from
 * the last successful sync. GitHub does not count an authorised 304 against the rate limit.
 */
import { DownloadFetchError, fetchFollowingRedirects } from "../fetch/download-fetch";
import { isHttpUrl } from "../fetch/rules/http-url";
import type { GitHubAsset, GitHubRelease } from "./rules/github-types";

/** What is remembered of each page between syncs. */
export interface PageState {
  url: string;
  etag: string;
  next: string | null;
}

export interface GitHubSource {
  apiUrl: string;
  /** `owner/repo`. */
  repo: string;
  token?: string;
}

export type ListResult =
  /** Every page answered 304: nothing changed since the last successful sync. */
  | { kind: "unchanged"; pages: PageState[]; notModified: number }
  /** The releases of the pages that changed (unchanged pages are already reflected locally). */
  | { kind: "changed"; releases: GitHubRelease[]; pages: PageState[]; fetched: number; notModified: number };

/** Far more than any real project: a bound, so a misbehaving server cannot page us forever. */
const MAX_PAGES = 100;

/** GitHub's own API: the sync's default (`DEFAULT_GITHUB_API` in sync-service). */
const DEFAULT_API_URL = "https://api.github.com";

const REPO_RE = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/;

export function isValidRepo(repo: string): boolean {
  return REPO_RE.test(repo) && !repo.split("/").some((p) => p === "." || p === "..");
}

export function firstPageUrl(source: GitHubSource): string {
  const base = source.apiUrl.replace(/\/+$/, "");
  const [owner, name] = source.repo.split("/");
  return `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/releases?per_page=100`;
}

/** The `rel="next"` target of an RFC 8288 Link header, or null. */
export function parseLinkNext(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*(.*)$/.exec(part);
    if (!m) continue;
    const rels = /(?:^|;)\s*rel\s*=\s*"?([^";]+)"?/i.exec(m[2]);
    if (rels && rels[1].toLowerCase().split(/\s+/).includes("next")) return m[1];
  }
  return null;
}

export function apiHeaders(): Record<string, string> {
  return {
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "gantry-release-sync",
  };
}

/**
 * The configured sync token (GANTRY_SYNC_TOKEN) for a sync against `apiUrl`: only when that is the configured API's
 * origin (or not given, meaning the configured API). A sync an admin or a flag points at another API gets no
 * configured token, so the token cannot be sent to a server of someone's choosing.
 */
export function configuredTokenFor(apiUrl: string | undefined, configured: { apiUrl?: string; token?: string }): string | undefined {
  if (!configured.token) return undefined;
  if (apiUrl === undefined) return configured.token;
  try {
    return new URL(apiUrl).origin === new URL(configured.apiUrl || DEFAULT_API_URL).origin ? configured.token : undefined;
  } catch {
    return undefined;
  }
}

export function credentials(source: GitHubSource): { credentialHeaders?: Record<string, string>; credentialOrigin?: string } {
  if (!source.token) return {};
  return { credentialHeaders: { authorization: `Bearer ${source.token}` }, credentialOrigin: new URL(source.apiUrl).origin };
}

/**
 * Lists releases, page by page. Any failure (network, 4xx/5xx, malformed JSON) throws: the caller then keeps
 * its last good state rather than acting on a partial list.
 */
export async function listReleases(
  source: GitHubSource,
  previous: PageState[],
  options: { fetch: typeof fetch; signal?: AbortSignal },
): Promise<ListResult> {
  const known = new Map(previous.map((p) => [p.url, p]));
  const pages: PageState[] = [];
  const releases: GitHubRelease[] = [];
  let fetched = 0;
  let notModified = 0;
  const seen = new Set<string>();
  let url: string | null = firstPageUrl(source);

  while (url) {
    if (pages.length >= MAX_PAGES) throw new DownloadFetchError(`more than ${MAX_PAGES} pages of releases`);
    if (seen.has(url)) throw new DownloadFetchError("the release pages link back to themselves");
    seen.add(url);
    if (!isHttpUrl(url)) throw new DownloadFetchError("a release page links to a non-http(s) address");
    const before = known.get(url);
    const headers = apiHeaders();
    if (before?.etag) headers["if-none-match"] = before.etag;
    const res = await fetchFollowingRedirects(url, { fetch: options.fetch, headers, ...credentials(source), signal: options.signal });
    if (res.status === 304 && before) {
      await res.body?.cancel().catch(() => {});
      notModified++;
      pages.push(before);
      url = before.next;
      continue;
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {});
      throw new DownloadFetchError(describeFailure(res), res.status);
    }
    let data: unknown;
    try {
      data = await res.json();
    } catch {
      throw new DownloadFetchError("the release list is not valid JSON");
    }
    if (!Array.isArray(data)) throw new DownloadFetchError("the release list is not a JSON array");
    fetched++;
    releases.push(...data.filter(isReleaseShape));
    const next = parseLinkNext(res.headers.get("link"));
    const resolvedNext = next ? new URL(next, url).toString() : null;
    pages.push({ url, etag: res.headers.get("etag") ?? "", next: resolvedNext });
    url = resolvedNext;
  }
  return fetched === 0 ? { kind: "unchanged", pages, notModified } : { kind: "changed", releases, pages, fetched, notModified };
}

function describeFailure(res: Response): string {
  if ((res.status === 403 || res.status === 429) && res.headers.get("x-ratelimit-remaining") === "0") {
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    const when = Number.isFinite(reset) && reset > 0 ? ` until ${new Date(reset * 1000).toISOString()}` : "";
    return `rate limited by the release API${when}; pass a token to raise the limit`;
  }
  if (res.status === 401) return "the release API refused the token (401)";
  if (res.status === 404) return "no such repository, or it is private and no token was given (404)";
  return `the release API answered ${res.status}`;
}

/** Entries that lack what we rely on are dropped rather than trusted. */
function isReleaseShape(v: unknown): v is GitHubRelease {
  if (!v || typeof v !== "object") return false;
  const r = v as Record<string, unknown>;
  if (typeof r.id !== "number" || typeof r.tag_name !== "string" || !Array.isArray(r.assets)) return false;
  r.assets = (r.assets as unknown[]).filter((a): a is GitHubAsset => {
    if (!a || typeof a !== "object") return false;
    const x = a as Record<string, unknown>;
    return typeof x.id === "number" && typeof x.name === "string" && typeof x.size === "number" && typeof x.url === "string";
  });
  r.draft = r.draft === true;
  r.prerelease = r.prerelease === true;
  return true;
}
