/**
 * Staged rollouts and the kill switch over HTTP (issue 19): a release offered to a share of client ids (by the
 * X-App-Client-ID header or the client_id query parameter), raised, paused, resumed and yanked through the CLI
 * (another process on the same database) and the admin API; caches kept correct by Vary and an ETag per variant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { seenFromAnotherProcess } from "../support/other-process";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { rolloutOffers } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");

async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([BUN, "src/main.ts", "releases", ...args, "--data-dir", dataDir], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GANTRY_LOG_LEVEL: "error" },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

let g: Gantry;
let dataDir: string;
const tempDir = tempDirs();
const ids = Array.from({ length: 1000 }, (_, i) => `install-${i.toString(36)}-${(i * 7919) % 10007}`);

/** The version /api/v1/latest offers this client id (header), or the anonymous document's. */
async function offered(id: string | null, how: "header" | "query" = "header", path = "/api/v1/latest"): Promise<string> {
  const url = how === "query" && id !== null ? `${g.url}${path}?client_id=${encodeURIComponent(id)}` : `${g.url}${path}`;
  const res = await fetch(url, { headers: how === "header" && id !== null ? { "x-app-client-id": id } : {} });
  expect(res.status).toBe(200);
  return (await res.json()).version;
}

/** A heartbeat of this client reporting `version`. */
function beat(id: string, version: string): Promise<Response> {
  return fetch(`${g.url}/api/v1/client/heartbeat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-client-id": id },
    body: JSON.stringify({ app: "demo", version, platform: "windows", arch: "x64" }),
  });
}

async function group(): Promise<Set<string>> {
  const out = new Set<string>();
  for (const id of ids) if ((await offered(id)) === "1.1.0") out.add(id);
  return out;
}

beforeAll(async () => {
  dataDir = tempDir("rollout");
  const files = tempDir("rollout-files");
  for (const v of ["1.0.0", "1.1.0"]) {
    for (const name of [`App-${v}-x64-setup.exe`, `web-${v}.zip`]) writeFileSync(join(files, name), `bytes of ${name}`);
  }
  g = await startGantry({ config: { dataDir }, databasePath: join(dataDir, "gantry.db") });
  expect((await cli(dataDir, "publish", "1.0.0", join(files, "App-1.0.0-x64-setup.exe"), join(files, "web-1.0.0.zip"))).code).toBe(0);
  await seenFromAnotherProcess(() => offered(null), (v) => v === "1.0.0", "1.0.0");
});
afterAll(async () => {
  await g.stop();
});

let firstGroup = new Set<string>();

describe("staged rollout", () => {
  test("with no rollout in progress the document does not vary: no Vary header, one ETag for every client", async () => {
    const a = await fetch(`${g.url}/api/v1/latest`, { headers: { "x-app-client-id": ids[0] } });
    const b = await fetch(`${g.url}/api/v1/latest`);
    expect(a.headers.get("vary") ?? "").not.toContain("X-App-Client-ID");
    expect(a.headers.get("etag")).toBe(b.headers.get("etag"));
  });

  test("publish --rollout 30: about 30% of 1,000 client ids get 1.1.0, always the same ones; no id gets 1.0.0", async () => {
    const dir = tempDir("rollout-files-2");
    for (const name of ["App-1.1.0-x64-setup.exe", "web-1.1.0.zip"]) writeFileSync(join(dir, name), `bytes of ${name}`);
    const res = await cli(dataDir, "publish", "1.1.0", join(dir, "App-1.1.0-x64-setup.exe"), join(dir, "web-1.1.0.zip"), "--rollout", "30", "--json");
    expect(res.stderr).toBe("");
    expect(JSON.parse(res.stdout)).toMatchObject({ version: "1.1.0", rolloutPercent: 30, rolloutPaused: false, yanked: false });
    const inGroup = ids.find((id) => rolloutOffers({ version: "1.1.0", rolloutPercent: 30 }, id))!;
    await seenFromAnotherProcess(() => offered(inGroup), (v) => v === "1.1.0", "the rollout");

    firstGroup = await group();
    expect(firstGroup.size).toBeGreaterThanOrEqual(250);
    expect(firstGroup.size).toBeLessThanOrEqual(350);
    // The same id always gets the same answer, by header or by query parameter, on both documents.
    for (const id of ids.slice(0, 100)) {
      const v = firstGroup.has(id) ? "1.1.0" : "1.0.0";
      expect(await offered(id)).toBe(v);
      expect(await offered(id, "query")).toBe(v);
      expect(await offered(id, "header", "/update/latest.json")).toBe(v);
    }
    expect(await offered(null)).toBe("1.0.0");
    expect(await offered(null, "header", "/update/latest.json")).toBe("1.0.0");
    // A malformed id is no id.
    expect((await (await fetch(`${g.url}/api/v1/latest?client_id=${encodeURIComponent("a b")}`)).json()).version).toBe("1.0.0");
  });

  test("Vary: X-App-Client-ID and an ETag per variant; 304 revalidation works per variant", async () => {
    const inId = [...firstGroup][0];
    const outId = ids.find((id) => !firstGroup.has(id))!;
    for (const path of ["/api/v1/latest", "/update/latest.json"]) {
      const a = await fetch(`${g.url}${path}`, { headers: { "x-app-client-id": inId } });
      const b = await fetch(`${g.url}${path}`, { headers: { "x-app-client-id": outId } });
      const anon = await fetch(`${g.url}${path}`);
      for (const r of [a, b, anon]) expect(r.headers.get("vary")).toContain("X-App-Client-ID");
      const [ea, eb] = [a.headers.get("etag")!, b.headers.get("etag")!];
      expect(ea).not.toBe(eb);
      expect(anon.headers.get("etag")).toBe(eb);
      const again = (id: string, etag: string) => fetch(`${g.url}${path}`, { headers: { "x-app-client-id": id, "if-none-match": etag } });
      const ra = await again(inId, ea);
      expect(ra.status).toBe(304);
      expect(ra.headers.get("etag")).toBe(ea);
      expect(ra.headers.get("vary")).toContain("X-App-Client-ID");
      expect((await again(outId, eb)).status).toBe(304);
      // Another variant's tag is not this client's copy.
      const cross = await again(outId, ea);
      expect(cross.status).toBe(200);
      expect(cross.headers.get("etag")).toBe(eb);
      // By query parameter: the same tag as by header.
      const q = await fetch(`${g.url}${path}?client_id=${encodeURIComponent(inId)}`, { headers: { "if-none-match": ea } });
      expect(q.status).toBe(304);
    }
  });

  test("raising to 60% (CLI rollout) keeps all of the first group and adds about 30% more", async () => {
    const res = await cli(dataDir, "rollout", "1.1.0", "60");
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("rollout 60%");
    const newcomer = ids.find((id) => !firstGroup.has(id) && rolloutOffers({ version: "1.1.0", rolloutPercent: 60 }, id))!;
    await seenFromAnotherProcess(() => offered(newcomer), (v) => v === "1.1.0", "60%");
    const second = await group();
    for (const id of firstGroup) expect(second.has(id)).toBe(true);
    expect(second.size).toBeGreaterThanOrEqual(550);
    expect(second.size).toBeLessThanOrEqual(650);
    firstGroup = second;
  });

  test("pause: nobody joins (of the group, only clients whose heartbeats report 1.1.0 keep it); the percentage cannot change until resume", async () => {
    // Of the group, 20 installed 1.1.0 (their heartbeats say so, in either spelling) and 5 still run 1.0.0; the
    // rest never reported, like ids asking for the first time.
    const members = [...firstGroup];
    const running = members.slice(0, 20);
    const notYet = members.slice(20, 25);
    for (const [i, id] of running.entries()) expect((await beat(id, i % 2 ? "v1.1" : "1.1.0")).status).toBe(200);
    for (const id of notYet) expect((await beat(id, "1.0.0")).status).toBe(200);
    const outside = ids.find((id) => !firstGroup.has(id))!;
    expect((await beat(outside, "1.1.0")).status).toBe(200);

    const paused = await g.admin("/admin/api/releases/1.1.0/pause", { method: "POST" });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ rolloutPercent: 60, rolloutPaused: true });
    // Heartbeats reach the clients table within the fold interval (about a second).
    await pollUntil(async () => (await Promise.all(running.map((id) => offered(id)))).every((v) => v === "1.1.0"), Boolean, {
      what: "the running clients to be offered 1.1.0",
      timeoutMs: 10_000,
      stepMs: 100,
    });
    // Before: every id of the group was still offered 1.1.0 during the pause (26 of 300 fresh ids in the report).
    expect(await group()).toEqual(new Set(running));
    for (const id of running.slice(0, 5)) expect(await offered(id, "query", "/update/latest.json")).toBe("1.1.0");
    for (const id of [...notYet, members[30]]) expect(await offered(id, "query", "/update/latest.json")).toBe("1.0.0");

    const raise = await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 90 }) });
    expect(raise.status).toBe(409);
    expect((await cli(dataDir, "rollout", "1.1.0", "90")).code).not.toBe(0);
    expect(await group()).toEqual(new Set(running));
    // A release offered to everyone has no rollout to pause.
    expect((await g.admin("/admin/api/releases/1.0.0/pause", { method: "POST" })).status).toBe(409);
    expect((await g.admin("/admin/api/releases/1.1.0/resume", { method: "POST" })).status).toBe(200);
    // Resumed: the whole group again.
    expect(await group()).toEqual(firstGroup);
    const raised = await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 90 }) });
    expect(await raised.json()).toMatchObject({ rolloutPercent: 90, rolloutPaused: false });
    expect((await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 101 }) })).status).toBe(400);
    expect((await cli(dataDir, "rollout", "1.1.0", "half")).code).toBe(2);
  });

  test("yank withdraws it from every document; its files still download; unyank puts it back", async () => {
    const release = await (await g.admin("/admin/api/releases/1.1.0")).json();
    const exe = release.assets.find((a: any) => a.name === "App-1.1.0-x64-setup.exe");
    const y = await cli(dataDir, "yank", "1.1.0");
    expect(y.code).toBe(0);
    expect(y.stdout).toContain("rollout yanked");
    const member = [...firstGroup][0];
    await seenFromAnotherProcess(() => offered(member), (v) => v === "1.0.0", "the yank");
    for (const id of ids.slice(0, 200)) {
      expect(await offered(id)).toBe("1.0.0");
      expect(await offered(id, "query", "/update/latest.json")).toBe("1.0.0");
    }
    // Nothing varies any more: the fast path again.
    expect((await fetch(`${g.url}/api/v1/latest`, { headers: { "x-app-client-id": member } })).headers.get("vary") ?? "").not.toContain("X-App-Client-ID");
    const link = await fetch(`${g.url}/api/v1/download/${exe.id}`, { redirect: "manual" });
    expect(link.status).toBe(302);
    const file = await fetch(link.headers.get("location")!);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("bytes of App-1.1.0-x64-setup.exe");
    // A yanked release's rollout is not changed; unyank brings it back at 90%.
    expect((await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 100 }) })).status).toBe(409);
    expect(await (await g.admin("/admin/api/releases/1.1.0/unyank", { method: "POST" })).json()).toMatchObject({ yanked: false, rolloutPercent: 90 });
    expect(await offered(member)).toBe("1.1.0");
  });

  test("at 100% everyone gets it, id or not, and the document stops varying", async () => {
    expect((await g.admin("/admin/api/releases/1.1.0", { method: "PATCH", body: JSON.stringify({ rolloutPercent: 100 }) })).status).toBe(200);
    expect(await offered(null)).toBe("1.1.0");
    const res = await fetch(`${g.url}/api/v1/latest`, { headers: { "x-app-client-id": ids[3] } });
    expect((await res.json()).version).toBe("1.1.0");
    expect(res.headers.get("vary") ?? "").not.toContain("X-App-Client-ID");
  });
});
