/**
 * Sync from a fake GitHub Releases API (tests/support/fake-github.ts): pagination, conditional requests,
 * redirects to a second host, a failing asset, a second run that downloads nothing, remote failure keeping
 * the last good state, minAppVersion never raised, the CLI, the in-server periodic sync and single flight.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { bytesOf, startFakeGitHub, type FakeGitHub, type FakeRelease } from "../support/fake-github";
import { startGantry, type Gantry } from "../support/harness";
import { openDatabase } from "../../src/store/sqlite/db";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const TOKEN = "ghp_test_token_0123456789";
/** The fake GitHub listens on 127.0.0.1, which Gantry fetches from only when the operator allows it. */
const LOOPBACK_ALLOWED = { allowedFetchHosts: ["127.0.0.1"] };
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

function remote(): FakeRelease[] {
  return [
    { id: 50, tag: "nightly", assets: [] },
    { id: 40, tag: "v1.4.0", draft: true, assets: [{ id: 401, name: "Gantry-1.4.0-x64-setup.exe", bytes: bytesOf("d", 100) }] },
    { id: 30, tag: "v1.3.0-beta.1", prerelease: true, assets: [{ id: 301, name: "web-1.3.0-beta.1.zip", bytes: bytesOf("b", 900) }] },
    {
      id: 20,
      tag: "v1.2.0",
      body: "Second release.",
      publishedAt: "2025-02-01T00:00:00Z",
      assets: [
        { id: 201, name: "Gantry-1.2.0-x64-setup.exe", bytes: bytesOf("exe12", 70_000) },
        { id: 202, name: "web-1.2.0.zip", bytes: bytesOf("web12", 5_000), direct: true, withDigest: true },
        { id: 203, name: "Gantry-1.2.0-arm64.dmg", bytes: bytesOf("dmg12", 3_000), failStatus: 500 },
        { id: 204, name: "Gantry-1.2.0-x64.dmg", bytes: bytesOf("dmgx12", 3_000), advertisedSize: 3_500 },
      ],
    },
    {
      id: 10,
      tag: "v1.1.0",
      publishedAt: "2025-01-01T00:00:00Z",
      assets: [{ id: 101, name: "Gantry-1.1.0-x64-setup.exe", bytes: bytesOf("exe11", 40_000) }],
    },
  ];
}

describe("sync through the release services", () => {
  let gh: FakeGitHub;
  let g: Gantry;
  beforeAll(async () => {
    gh = startFakeGitHub({ releases: remote(), perPage: 2, token: TOKEN });
    g = await startGantry({ config: LOOPBACK_ALLOWED });
  });
  afterAll(async () => {
    await g.stop();
    await gh.stop();
  });
  const run = () => g.deps.releases.sync.run({ repo: "acme/app", apiUrl: gh.apiUrl, token: TOKEN });
  const latest = async () => (await fetch(`${g.url}/api/v1/latest`)).json();

  test("first run: every page, drafts/pre-releases/junk skipped, assets mirrored through redirects, failures isolated", async () => {
    const report = await run();
    expect(report.status).toBe("partial");
    expect(report.pagesFetched).toBe(3);
    expect(report.releasesCreated.sort()).toEqual(["v1.1.0", "v1.2.0"]);
    expect(report.skipped.map((s) => s.tag).sort()).toEqual(["nightly", "v1.3.0-beta.1"]);
    expect(report.downloaded.map((d) => d.name).sort()).toEqual(["Gantry-1.1.0-x64-setup.exe", "Gantry-1.2.0-x64-setup.exe", "web-1.2.0.zip"]);
    expect(report.failed.map((f) => f.name).sort()).toEqual(["Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64.dmg"]);
    expect(report.failed.find((f) => f.name === "Gantry-1.2.0-x64.dmg")!.error).toContain("expected 3500");

    const lists = gh.requests.filter((r) => r.path.includes("/releases?"));
    expect(lists.map((r) => r.path)).toEqual([
      "/repos/acme/app/releases?per_page=100",
      "/repos/acme/app/releases?per_page=100&page=2",
      "/repos/acme/app/releases?per_page=100&page=3",
    ]);
    expect(lists.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && r.headers.accept === "application/vnd.github+json")).toBe(true);
    const assetCalls = gh.requests.filter((r) => r.path.includes("/releases/assets/"));
    expect(assetCalls.every((r) => r.headers.accept === "application/octet-stream" && r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    // The redirect to the storage host carried no token (the fake storage would answer 400).
    const storage = gh.requests.filter((r) => r.host === "storage");
    expect(storage.length).toBeGreaterThan(0);
    expect(storage.every((r) => r.status === 200 && r.headers.authorization === undefined)).toBe(true);

    const doc = await latest();
    expect(doc.version).toBe("1.2.0");
    const byName = Object.fromEntries(doc.assets.map((a: any) => [a.name, a]));
    expect(byName["Gantry-1.2.0-x64-setup.exe"]).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(bytesOf("exe12", 70_000))}`, recommended: true });
    expect(byName["web-1.2.0.zip"]).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(bytesOf("web12", 5_000))}` });
    // Not mirrored: keeps its upstream address, so it is still downloadable (by proxy).
    expect(byName["Gantry-1.2.0-arm64.dmg"]).toMatchObject({ source: "proxy", sha256: "" });
    expect(byName["Gantry-1.2.0-arm64.dmg"].downloadUrl).toBe(`${g.url}/api/v1/download/${byName["Gantry-1.2.0-arm64.dmg"].id}`);
    expect(doc.notes).toBe("Second release.");

    const body = new Uint8Array(await (await fetch(byName["Gantry-1.2.0-x64-setup.exe"].downloadUrl)).arrayBuffer());
    expect(sha256(body)).toBe(sha256(bytesOf("exe12", 70_000)));
    const view = await (await g.admin("/admin/api/releases/1.2.0")).json();
    expect(view.assets.find((a: any) => a.name === "Gantry-1.2.0-arm64.dmg")).toMatchObject({ mirrorPending: true, mirrorError: expect.stringContaining("500") });
  });

  test("second run: every page 304, nothing downloaded again (only the failed asset is retried)", async () => {
    gh.clear();
    const report = await run();
    expect(report.unchanged).toBe(true);
    expect(report.pagesNotModified).toBe(3);
    expect(report.pagesFetched).toBe(0);
    const lists = gh.requests.filter((r) => r.path.includes("/releases?"));
    expect(lists.every((r) => r.status === 304 && r.headers["if-none-match"]?.startsWith('W/"'))).toBe(true);
    expect(report.downloaded).toEqual([]);
    for (const name of ["Gantry-1.1.0-x64-setup.exe", "Gantry-1.2.0-x64-setup.exe", "web-1.2.0.zip"]) expect(gh.downloadsOf(name)).toEqual([]);
    expect(report.failed.map((f) => f.name).sort()).toEqual(["Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64.dmg"]);
  });

  test("the failed assets recover on a later run; then a run touches no asset at all", async () => {
    const r12 = gh.releases.find((r) => r.id === 20)!;
    delete r12.assets.find((a) => a.id === 203)!.failStatus;
    delete r12.assets.find((a) => a.id === 204)!.advertisedSize;
    // The listing changed (size of 204), so that page is fetched again; the others answer 304.
    const fixed = await run();
    expect(fixed.status).toBe("ok");
    expect(fixed.downloaded.map((d) => d.name).sort()).toEqual(["Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64.dmg"]);
    gh.clear();
    const quiet = await run();
    expect(quiet).toMatchObject({ status: "ok", unchanged: true, downloaded: [], failed: [] });
    expect(gh.requests.filter((r) => r.host === "storage" || r.path.includes("/assets/"))).toEqual([]);
    const dmg = (await latest()).assets.find((a: any) => a.name === "Gantry-1.2.0-arm64.dmg");
    expect(dmg).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(bytesOf("dmg12", 3_000))}`, recommended: true });
  });

  test("the remote failing keeps the last good state", async () => {
    const before = await (await fetch(`${g.url}/api/v1/latest`)).text();
    gh.listFailure = 502;
    const report = await run();
    gh.listFailure = null;
    expect(report.status).toBe("failed");
    expect(report.error).toContain("502");
    expect(await (await fetch(`${g.url}/api/v1/latest`)).text()).toBe(before);
    expect((await g.deps.releases.sync.lastReport())?.status).toBe("failed");
    // A wrong token is a failure too, and changes nothing.
    const denied = await g.deps.releases.sync.run({ repo: "acme/app", apiUrl: gh.apiUrl, token: "wrong" });
    expect(denied.status).toBe("failed");
    expect(denied.error).toContain("401");
  });

  test("minAppVersion is never raised by sync; a new release inherits the operator's floor", async () => {
    expect((await g.admin("/admin/api/releases/1.2.0", { method: "PATCH", body: JSON.stringify({ minAppVersion: "1.1.0" }) })).status).toBe(200);
    gh.releases = [
      { id: 60, tag: "v1.5.0", body: "Third.", publishedAt: "2025-03-01T00:00:00Z", assets: [{ id: 601, name: "web-1.5.0.zip", bytes: bytesOf("web15", 2_000) }] },
      ...gh.releases.map((r) => (r.id === 20 ? { ...r, body: "Second release, edited." } : r)),
    ];
    const report = await run();
    expect(report.status).toBe("ok");
    expect(report.releasesCreated).toEqual(["v1.5.0"]);
    expect(report.releasesUpdated).toEqual(["v1.2.0"]);
    const r12 = await (await g.admin("/admin/api/releases/1.2.0")).json();
    expect(r12).toMatchObject({ notes: "Second release, edited.", minAppVersion: "1.1.0" });
    const manifest = await (await fetch(`${g.url}/update/latest.json`)).json();
    expect(manifest).toMatchObject({ version: "1.5.0", name: "web-1.5.0.zip", minAppVersion: "1.1.0", hash: sha256(bytesOf("web15", 2_000)) });
  });

  test("single flight: concurrent calls share one run; another process's lease refuses a second", async () => {
    gh.clear();
    const a = run();
    const b = run();
    expect(b).toBe(a);
    await a;
    expect(gh.requests.filter((r) => r.path === "/repos/acme/app/releases?per_page=100").length).toBe(1);

    const store = g.deps.releases.store;
    expect(await store.acquireLease("release-sync", "other-process", Date.now() + 60_000, Date.now())).toBe(true);
    await expect(run()).rejects.toMatchObject({ code: "conflict" });
    await store.releaseLease("release-sync", "other-process");
    expect((await run()).status).toBe("ok");
  });
});

describe("gantry releases sync (CLI)", () => {
  const tempDir = tempDirs();
  let gh: FakeGitHub;
  let dataDir: string;
  beforeAll(() => {
    gh = startFakeGitHub({ releases: remote(), perPage: 100 });
    gh.releases.find((r) => r.id === 20)!.assets = gh.releases.find((r) => r.id === 20)!.assets.filter((a) => !a.failStatus && !a.advertisedSize);
    dataDir = tempDir("sync-cli");
    // A database as a server leaves it (on a fresh dir the CLI would create one and say so on stderr).
    openDatabase(join(dataDir, "gantry.db")).close();
  });
  afterAll(async () => {
    await gh.stop();
  });
  const cli = async (...args: string[]) => {
    const sync = args[0] === "sync" ? ["--allowed-fetch-hosts", "127.0.0.1"] : [];
    const proc = Bun.spawn([BUN, "src/main.ts", "releases", ...args, ...sync, "--data-dir", dataDir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  };

  test("--prereleases includes pre-releases; no token means browser download URLs; no progress bar off a terminal", async () => {
    const res = await cli("sync", "--github", "acme/app", "--api-url", gh.apiUrl, "--prereleases", "--json");
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    const report = JSON.parse(res.stdout);
    expect(report.releasesCreated.sort()).toEqual(["v1.1.0", "v1.2.0", "v1.3.0-beta.1"]);
    expect(gh.requests.some((r) => r.path.includes("/releases/download/"))).toBe(true);
    expect(gh.requests.some((r) => r.path.includes("/releases/assets/"))).toBe(false);
    expect(gh.requests.every((r) => r.headers.authorization === undefined)).toBe(true);

    const again = await cli("sync", "--github", "acme/app", "--api-url", gh.apiUrl, "--prereleases");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("unchanged since the last sync");
    expect(again.stdout).toContain("downloaded: 0 file(s)");

    const list = JSON.parse((await cli("list", "--json")).stdout);
    expect(list.map((r: any) => r.version)).toEqual(["v1.3.0-beta.1", "v1.2.0", "v1.1.0"]);
    expect(list.find((r: any) => r.version === "v1.3.0-beta.1").prerelease).toBe(true);
  });

  test("bad input exits 2; an unreachable API exits 1 and changes nothing", async () => {
    expect((await cli("sync")).code).toBe(2);
    expect((await cli("sync", "--github", "../etc", "--api-url", gh.apiUrl)).code).toBe(2);
    expect((await cli("sync", "--github", "acme/app", "--api-url", "ftp://x")).code).toBe(2);
    const down = await cli("sync", "--github", "acme/app", "--api-url", "http://127.0.0.1:1");
    expect(down.code).toBe(1);
    expect(down.stdout).toContain("Nothing was changed");
    expect(JSON.parse((await cli("list", "--json")).stdout)).toHaveLength(3);
  });

  test("an API URL with user:password@ in it: the report, printed and stored, shows neither", async () => {
    const apiUrl = "http://syncuser:Sync-PASS-4b9e@127.0.0.1:1";
    for (const json of [["--json"], []]) {
      const res = await cli("sync", "--github", "acme/app", "--api-url", apiUrl, ...json);
      expect(res.code).toBe(1);
      expect(res.stdout + res.stderr).not.toContain("Sync-PASS-4b9e");
      expect(res.stdout + res.stderr).not.toContain("syncuser");
      if (json.length) expect(JSON.parse(res.stdout).apiUrl).toBe("http://***@127.0.0.1:1");
    }
    const db = openDatabase(join(dataDir, "gantry.db"));
    try {
      const stored = db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'releases.sync.last'").get();
      expect(stored?.value).toContain("http://***@127.0.0.1:1");
      expect(stored?.value).not.toContain("Sync-PASS-4b9e");
    } finally {
      db.close();
    }
  });
});

describe("the configured sync token goes to the configured API only", () => {
  let configured: FakeGitHub;
  let other: FakeGitHub;
  let g: Gantry;
  beforeAll(async () => {
    configured = startFakeGitHub({ releases: remote().filter((r) => r.id === 10), token: TOKEN });
    other = startFakeGitHub({ releases: remote().filter((r) => r.id === 10) });
    g = await startGantry({ config: { ...LOOPBACK_ALLOWED, syncGithub: "acme/app", syncApiUrl: configured.apiUrl, syncToken: TOKEN, syncIntervalMinutes: 0 } });
  });
  afterAll(async () => {
    await g.stop();
    await configured.stop();
    await other.stop();
  });
  const sync = (body: Record<string, unknown>) => g.admin("/admin/api/releases/sync", { method: "POST", body: JSON.stringify(body) });

  test("an admin naming another apiUrl gets no configured token; the configured API still does", async () => {
    const elsewhere = await sync({ apiUrl: other.apiUrl });
    expect(elsewhere.status).toBe(200);
    expect(other.requests.length).toBeGreaterThan(0);
    expect(other.requests.filter((r) => r.headers.authorization !== undefined)).toEqual([]);

    // Its own token is the admin's to give.
    other.clear();
    await sync({ apiUrl: other.apiUrl, token: "ghp_the_admins_own" });
    expect(other.requests.filter((r) => r.host === "api").every((r) => r.headers.authorization === "Bearer ghp_the_admins_own")).toBe(true);

    // The configured API (as configured, or spelled with a trailing slash) gets the configured token.
    for (const body of [{}, { apiUrl: `${configured.apiUrl}/` }]) {
      configured.clear();
      expect((await sync(body)).status).toBe(200);
      const api = configured.requests.filter((r) => r.host === "api");
      expect(api.length).toBeGreaterThan(0);
      expect(api.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    }
  });
});

describe("sync fetches from public addresses only, unless the operator allows the host", () => {
  let gh: FakeGitHub;
  let g: Gantry;
  beforeAll(async () => {
    gh = startFakeGitHub({ releases: remote().filter((r) => r.id === 10) });
    g = await startGantry({ captureLogs: true });
  });
  afterAll(async () => {
    await g.stop();
    await gh.stop();
  });
  const sync = async (apiUrl: string) =>
    (await g.admin("/admin/api/releases/sync", { method: "POST", body: JSON.stringify({ github: "acme/app", apiUrl }) })).json() as Promise<any>;

  test("an API on a loopback, private or metadata address is refused before any request, like an unreachable host", async () => {
    const host = new URL(gh.apiUrl).host;
    const refused = await sync(gh.apiUrl);
    expect(refused.status).toBe("failed");
    expect(refused.error).toContain(`cannot reach ${host}`);
    expect(gh.requests).toEqual([]);
    // The operator's log says why; the report does not.
    expect(g.logs.some((l) => l.includes("fetch refused") && l.includes("GANTRY_ALLOWED_FETCH_HOSTS"))).toBe(true);
    expect(JSON.stringify(refused)).not.toContain("not a public address");

    // Refused and unreachable read the same: the text names the host and nothing else.
    const documentation = await sync("http://192.0.2.1:9");
    const metadata = await sync("http://169.254.169.254");
    const mapped = await sync(`http://[::ffff:127.0.0.1]:${new URL(gh.apiUrl).port}`);
    const unknown = await sync("http://no-such-host.invalid");
    for (const [report, h] of [[documentation, "192.0.2.1:9"], [metadata, "169.254.169.254"], [mapped, `[::ffff:7f00:1]:${new URL(gh.apiUrl).port}`], [unknown, "no-such-host.invalid"]] as const) {
      expect(report.status).toBe("failed");
      expect(report.error).toBe(refused.error.replace(host, h));
    }
    expect(gh.requests).toEqual([]);
  });
});

describe("periodic sync inside the server", () => {
  let gh: FakeGitHub;
  let g: Gantry | null = null;
  afterEach(async () => {
    await g?.stop();
    g = null;
    await gh?.stop();
  });

  test("syncs on start when GANTRY_SYNC_GITHUB and an interval are set; the admin API shows the report", async () => {
    gh = startFakeGitHub({ releases: remote().filter((r) => r.id === 10) });
    g = await startGantry({ config: { ...LOOPBACK_ALLOWED, syncGithub: "acme/app", syncApiUrl: gh.apiUrl, syncIntervalMinutes: 60 } });
    const { value: doc } = await pollUntil(
      async () => (await fetch(`${g!.url}/api/v1/latest`)).json() as Promise<any>,
      (d) => Boolean(d.version) && d.assets[0]?.source === "mirror",
      { what: "the synced release with its mirrored asset" },
    );
    expect(doc.version).toBe("1.1.0");
    expect(doc.assets[0].source).toBe("mirror");
    const status = await (await g.admin("/admin/api/releases/sync")).json();
    expect(status.configured).toMatchObject({ github: "acme/app", apiUrl: gh.apiUrl, intervalMinutes: 60 });
    expect(status.last).toMatchObject({ status: "ok", repo: "acme/app" });
    // A sync asked for through the admin API joins or follows it; it never runs twice at once.
    const now = await g.admin("/admin/api/releases/sync", { method: "POST" });
    expect(now.status).toBe(200);
    expect((await now.json()).status).toBe("ok");
  });

  test("no periodic sync without an interval", async () => {
    gh = startFakeGitHub({ releases: remote() });
    g = await startGantry({ config: { ...LOOPBACK_ALLOWED, syncGithub: "acme/app", syncApiUrl: gh.apiUrl, syncIntervalMinutes: 0 } });
    // A fixed time is the point here: no request may reach GitHub within it (a sync on start would, at once).
    await Bun.sleep(300);
    expect(gh.requests).toEqual([]);
    const noRepo = await g.admin("/admin/api/releases/sync", { method: "POST", body: JSON.stringify({ github: "bad repo" }) });
    expect(noRepo.status).toBe(400);
  });
});
