/**
 * POST /api/v1/client/heartbeat over HTTP: the 400 cases, header preference, de-duplication, a burst of
 * 200 clients (group commit), the online window with an injected clock, and durability across a kill -9.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteClientRepository } from "../../src/store/sqlite/clients";
import { startGantry, TEST_BACKEND, type Gantry } from "../support/harness";

const ROOT = join(import.meta.dir, "..", "..");
const T0 = Date.parse("2025-06-15T12:00:00.000Z");

let clock = T0;
let g: Gantry;

beforeAll(async () => {
  g = await startGantry({ now: () => clock });
});
afterAll(async () => {
  await g.stop();
});
afterEach(async () => {
  clock = T0;
  await g.deps.engagement.clients.pruneClients(Number.MAX_SAFE_INTEGER);
});

function beat(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${g.url}/api/v1/client/heartbeat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Every column of the clients table, numbers as numbers on any backend. */
const CLIENT_COLUMNS = `client_id, app, version, platform, arch, runtime, locale, CAST(first_seen AS DOUBLE PRECISION) AS first_seen,
  CAST(last_seen AS DOUBLE PRECISION) AS last_seen, CAST(count AS DOUBLE PRECISION) AS count`;

/** The clients table once reports are folded into it (what every reader of it sees). */
async function clientRows(): Promise<Array<Record<string, any>>> {
  await g.deps.engagement.clients.fold();
  return g.query(`SELECT ${CLIENT_COLUMNS} FROM clients`);
}
async function row(clientId: string): Promise<any> {
  await g.deps.engagement.clients.fold();
  return (await g.query(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE client_id = $1`, clientId))[0] ?? null;
}
const rowCount = async () => (await clientRows()).length;

describe("acknowledgement", () => {
  test("200 with the recommended interval; stored before the reply", async () => {
    const res = await beat(
      { app: "myapp", version: "v1.2.0", platform: "Windows", arch: "x64", runtime: "electron", locale: "zh_CN" },
      { "X-App-Client-ID": "client-1" },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ ok: true, nextIntervalSeconds: 60, onlineWindowSeconds: 300 });
    expect(await row("client-1")).toEqual({
      client_id: "client-1",
      first_seen: T0,
      last_seen: T0,
      app: "myapp",
      version: "1.2.0",
      platform: "windows",
      arch: "x64",
      runtime: "electron",
      locale: "zh-CN",
      count: 1,
    });
  });
  test("the body's clientId works without the header; only the id is required", async () => {
    expect((await beat({ clientId: "body-only" })).status).toBe(200);
    expect(await row("body-only")).toMatchObject({ version: "", platform: "", count: 1 });
  });
  test("the header with no body at all is a heartbeat (issue 19), as is an empty JSON object", async () => {
    const res = await fetch(`${g.url}/api/v1/client/heartbeat`, { method: "POST", headers: { "X-App-Client-ID": "header-only" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, nextIntervalSeconds: 60, onlineWindowSeconds: 300 });
    expect(await row("header-only")).toMatchObject({ version: "", platform: "", count: 1 });
    expect((await beat("", { "X-App-Client-ID": "header-only" })).status).toBe(200);
    expect((await beat({}, { "X-App-Client-ID": "header-only" })).status).toBe(200);
    expect(await row("header-only")).toMatchObject({ count: 3 });
  });
  test("header preferred over the body's clientId", async () => {
    const res = await beat({ clientId: "from-body", version: "2.0.0" }, { "X-App-Client-ID": "from-header" });
    expect(res.status).toBe(200);
    expect(await row("from-header")).toMatchObject({ version: "2.0.0" });
    expect(await row("from-body")).toBeNull();
  });
  test("the media type is not checked: a text/plain beacon (navigator.sendBeacon) counts too", async () => {
    const res = await fetch(`${g.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({ clientId: "beacon", runtime: "web" }),
    });
    expect(res.status).toBe(200);
    expect(await row("beacon")).toMatchObject({ runtime: "web", count: 1 });
  });
  test("other methods are not heartbeats", async () => {
    const res = await fetch(`${g.url}/api/v1/client/heartbeat`, { headers: { "x-app-client-id": "getter" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await rowCount()).toBe(0);
  });
  test("no IP address or user agent is stored", async () => {
    await beat({ clientId: "private", ip: "203.0.113.9", userAgent: "Secret/1.0" }, { "user-agent": "Secret/1.0", "x-forwarded-for": "203.0.113.9" });
    if (TEST_BACKEND === "embedded") {
      // SQLite keeps reports in a journal before folding them into clients: nothing private there either.
      const journalled = JSON.stringify(g.db.query("SELECT * FROM heartbeat_journal").all());
      expect(journalled).not.toContain("203.0.113.9");
      expect(journalled).not.toContain("Secret");
    }
    await g.deps.engagement.clients.fold();
    const [stored] = await g.query("SELECT * FROM clients");
    expect(Object.keys(stored!).sort()).toEqual(["app", "arch", "client_id", "count", "first_seen", "last_seen", "locale", "platform", "runtime", "version"]);
    const dump = JSON.stringify(await g.query("SELECT * FROM clients"));
    expect(dump).not.toContain("203.0.113.9");
    expect(dump).not.toContain("Secret");
  });
});

describe("400 cases (nothing stored)", () => {
  const cases: Array<[string, string, Record<string, string>, string, string | null]> = [
    ["no client id anywhere", JSON.stringify({ version: "1.0" }), {}, "missing_client_id", "X-App-Client-ID"],
    ["empty header, empty body id", JSON.stringify({ clientId: "" }), { "X-App-Client-ID": "" }, "missing_client_id", "X-App-Client-ID"],
    ["body is a JSON array", "[]", { "X-App-Client-ID": "c" }, "invalid_json", null],
    ["body is a JSON string", '"hello"', { "X-App-Client-ID": "c" }, "invalid_json", null],
    ["body is null", "null", { "X-App-Client-ID": "c" }, "invalid_json", null],
    ["body is not JSON", "clientId=c", { "X-App-Client-ID": "c" }, "invalid_json", null],
    ["neither header nor body", "", {}, "missing_client_id", "X-App-Client-ID"],
    ["malformed version", JSON.stringify({ version: "banana" }), { "X-App-Client-ID": "c" }, "invalid_request", "version"],
    ["version with spaces", JSON.stringify({ version: "1.2 beta" }), { "X-App-Client-ID": "c" }, "invalid_request", "version"],
    ["overlong version", JSON.stringify({ version: "1".repeat(65) }), { "X-App-Client-ID": "c" }, "invalid_request", "version"],
    ["overlong client id header", "{}", { "X-App-Client-ID": "c".repeat(129) }, "invalid_request", "X-App-Client-ID"],
    ["overlong body client id", JSON.stringify({ clientId: "c".repeat(129) }), {}, "invalid_request", "clientId"],
    ["wrong type", JSON.stringify({ platform: 7 }), { "X-App-Client-ID": "c" }, "invalid_request", "platform"],
    ["bad locale", JSON.stringify({ locale: "not a tag" }), { "X-App-Client-ID": "c" }, "invalid_request", "locale"],
  ];
  for (const [title, body, headers, code, param] of cases) {
    test(title, async () => {
      const res = await beat(body, headers);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "invalid_request_error", code, param } });
      expect(await rowCount()).toBe(0);
    });
  }
  test("a body over 16 KiB is refused with 413", async () => {
    const res = await beat({ clientId: "big", padding: "x".repeat(17 * 1024) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("body_too_large");
    expect(await rowCount()).toBe(0);
  });
});

describe("de-duplication", () => {
  test("repeated heartbeats of one client are one row, counted once online, with the report count", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await beat({ version: "1.0.0" }, { "X-App-Client-ID": "dup" })).status).toBe(200);
      clock += 60_000;
    }
    expect(await rowCount()).toBe(1);
    expect(await row("dup")).toMatchObject({ count: 3, first_seen: T0, last_seen: T0 + 120_000 });
    const stats = await (await g.admin("/admin/api/stats/clients")).json();
    expect(stats.online).toBe(1);
    expect(stats.byVersion).toEqual({ "1.0.0": 1 });
  });
  test("concurrent duplicates in one batch also make one row", async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, () => beat({ runtime: "web" }, { "X-App-Client-ID": "same" })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(await rowCount()).toBe(1);
    expect((await row("same")).count).toBe(20);
  });
  test("a later partial report keeps the fields it does not carry, and updates those it does", async () => {
    await beat({ version: "1.0.0", platform: "linux", locale: "de" }, { "X-App-Client-ID": "partial" });
    clock += 60_000;
    await beat({ version: "1.1.0" }, { "X-App-Client-ID": "partial" });
    expect(await row("partial")).toMatchObject({ version: "1.1.0", platform: "linux", locale: "de", count: 2 });
  });
});

describe("burst", () => {
  test("200 clients posting at once: all acknowledged, all stored, in fewer transactions than requests", async () => {
    const before = { ...g.deps.engagement.heartbeats.totals };
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        beat({ version: `1.${i % 4}.0`, platform: i % 2 ? "macos" : "windows" }, { "X-App-Client-ID": `burst-${i}` }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(200).fill(200));
    expect(await rowCount()).toBe(200);
    const after = g.deps.engagement.heartbeats.totals;
    expect(after.heartbeats - before.heartbeats).toBe(200);
    expect(after.batches - before.batches).toBeLessThan(200);
    const stats = await (await g.admin("/admin/api/stats/clients")).json();
    expect(stats.online).toBe(200);
    expect(stats.byPlatform).toEqual({ macos: 100, windows: 100 });
  });
});

describe("online window (injected time)", () => {
  test("a client seen 6 minutes ago is not online; 5 minutes ago still is", async () => {
    await beat({}, { "X-App-Client-ID": "six-min" });
    clock = T0 + 60_000;
    await beat({}, { "X-App-Client-ID": "five-min" });
    clock = T0 + 2 * 60_000;
    await beat({}, { "X-App-Client-ID": "four-min" });

    clock = T0 + 6 * 60_000;
    const s = await (await g.admin("/admin/api/stats/clients")).json();
    expect(s.online).toBe(2);
    expect(s.knownClients).toBe(3);

    clock = T0 + 6 * 60_000 + 1;
    expect((await (await g.admin("/admin/api/stats/clients")).json()).online).toBe(1);
    clock = T0 + 7 * 60_000 + 1;
    expect((await (await g.admin("/admin/api/stats/clients")).json()).online).toBe(0);
  });
  test("a new heartbeat brings a client back online", async () => {
    await beat({}, { "X-App-Client-ID": "returning" });
    clock = T0 + 10 * 60_000;
    expect((await (await g.admin("/admin/api/stats/clients")).json()).online).toBe(0);
    await beat({}, { "X-App-Client-ID": "returning" });
    expect((await (await g.admin("/admin/api/stats/clients")).json()).online).toBe(1);
    expect(await row("returning")).toMatchObject({ first_seen: T0, last_seen: T0 + 10 * 60_000, count: 2 });
  });
});

describe("durability", () => {
  test("every acknowledged heartbeat survives kill -9 of the server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gantry-hb-kill-"));
    const script = `
      import { defaultConfig } from "./src/config.ts";
      import { createDeps } from "./src/deps.ts";
      import { silentLogger } from "./src/log.ts";
      import { startServer } from "./src/server.ts";
      const deps = await createDeps(defaultConfig({ dataDir: ${JSON.stringify(dir)}, adminToken: "t" }), { log: silentLogger });
      await deps.engagement.start();
      const running = startServer(deps, { hostname: "127.0.0.1", port: 0 });
      console.log(running.url);
      setInterval(() => {}, 1 << 30);
    `;
    const proc = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error("server exited before printing its URL");
        out += new TextDecoder().decode(value);
      }
      const url = out.trim();
      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          fetch(`${url}/api/v1/client/heartbeat`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-app-client-id": `k-${i}` },
            body: JSON.stringify({ version: "1.0.0" }),
          }),
        ),
      );
      expect(replies.every((r) => r.status === 200)).toBe(true);
      proc.kill("SIGKILL");
      await proc.exited;

      const db = new Database(join(dir, "gantry.db"), { strict: true });
      try {
        // Acknowledged means in the journal or already folded: folding what the killed server left finds them all.
        new SqliteClientRepository(db).foldNow();
        expect((db.query("SELECT COUNT(*) AS n, SUM(count) AS c FROM clients").get() as any)).toEqual({ n: 100, c: 100 });
      } finally {
        db.close();
      }
    } finally {
      proc.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
