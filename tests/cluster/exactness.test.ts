/**
 * Three `gantry serve` processes on one PostgreSQL and one Redis, requests spread over them: limits hold across
 * the instances exactly (RPM, RPD, concurrency, a token quota), keys made or changed anywhere act everywhere at
 * once, a download token is used once across all, a release or an announcement published on one is on every
 * instance's next document, and heartbeats are counted once whichever instance took them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { redisUnavailable, redisUrl } from "../support/redis";
import { s3Server, s3Unavailable } from "../support/s3";
import { startCluster, type Cluster } from "./cluster";

const unavailable = postgresUnavailable() ?? redisUnavailable();
/** Without Ceph the cluster runs on file-system mirrors and the shared-bucket test is skipped, saying so. */
const s3Missing = s3Unavailable();

/** A reply's text and usage are fixed: 150 output tokens, never more than the key's 200-token bound. */
const USAGE = { output_tokens: 150 };

let upstream: FakeUpstream;
let cluster: Cluster;
let db: { url: string; drop(): Promise<void> };
let sql: SQL;
/** Where the release's asset lives (a proxied asset: instances share no disk). */
let origin: ReturnType<typeof Bun.serve>;
const ASSET = new Uint8Array(64 * 1024).map((_, i) => i % 251);

/** POST /v1/responses on instance `i`: the status and, for a refusal, its error code. */
async function ask(i: number, key: string, input = "hello"): Promise<{ status: number; code: string | null }> {
  const res = await fetch(`${cluster.instances[i % cluster.instances.length]!.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", input }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code ?? null };
}

async function createKey(flags: string[]): Promise<{ id: string; key: string }> {
  return JSON.parse(await cluster.cli(["keys", "create", "--name", `k-${crypto.randomUUID()}`, "--json", ...flags]));
}

const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

function count<T>(xs: T[], pred: (x: T) => boolean): number {
  return xs.filter(pred).length;
}

if (unavailable) {
  console.warn(`cluster tests skipped: ${unavailable}`);
  test.skip(`cluster tests: ${unavailable}`, () => {});
} else {
  beforeAll(async () => {
    upstream = await startFakeUpstream({
      scenario: (body) =>
        JSON.stringify(body?.input ?? "").includes("SLOW")
          ? { kind: "slow", delayMs: 60, deltas: 10, text: "a slow reply" }
          : { kind: "text", text: "a reply", usage: USAGE },
    });
    origin = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(ASSET, { headers: { "content-type": "application/gzip" } }) });
    db = await freshDatabase();
    sql = new SQL({ url: db.url, max: 2 });
    let s3;
    if (!s3Missing) {
      const server = await s3Server();
      s3 = { bucket: await server.createBucket(), endpoint: server.endpoint, region: server.region, accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
    }
    // Heartbeat limits on (the test fleets elsewhere turn them off), addresses told by X-Forwarded-For.
    cluster = await startCluster({
      databaseUrl: db.url,
      redisUrl: await redisUrl(),
      upstreamUrl: upstream.url,
      s3,
      args: ["--heartbeat-clients-per-hour", "50", "--trusted-proxies", "127.0.0.1"],
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
    await sql?.close();
    await db?.drop();
    await upstream?.close();
    origin?.stop(true);
  });

  describe("limits are exact across three instances", () => {
    test("RPM 100: 600 concurrent requests spread over the instances admit 100 plus what the bucket refills meanwhile, never more", async () => {
      const { key } = await createKey(["--rpm", "100"]);
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 600 }, (_, i) => ask(i, key)));
      // The bucket refills one request every 0.6 s: a burst that takes longer (a loaded machine) earns that many
      // more, and no other. Exact means 100 plus the refill of the burst's own duration, never one above it.
      const refilled = Math.floor((performance.now() - started) / 600);
      const admitted = count(results, (r) => r.status === 200);
      expect(admitted).toBeGreaterThanOrEqual(100);
      expect(admitted).toBeLessThanOrEqual(100 + refilled);
      expect(count(results, (r) => r.status === 429 && r.code === "rate_limit_rpm")).toBe(600 - admitted);
    }, 60_000);

    test("RPD 50: 200 concurrent requests admit exactly 50", async () => {
      const { key } = await createKey(["--rpd", "50"]);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => ask(i, key)));
      expect(count(results, (r) => r.status === 200)).toBe(50);
      expect(count(results, (r) => r.code === "rate_limit_rpd")).toBe(150);
    }, 60_000);

    test("concurrency 4: never more than 4 upstream streams of the key in flight across all instances", async () => {
      const { key } = await createKey(["--concurrency", "4"]);
      // The upstream counts open streams; nothing else runs meanwhile, so its high-water mark is this key's.
      await pollUntil(() => upstream.open, (n) => n === 0, { what: "no stream open before the test" });
      upstream.resetMaxOpen();
      const results = await Promise.all(Array.from({ length: 45 }, (_, i) => ask(i, key, "SLOW")));
      expect(upstream.maxOpen).toBeLessThanOrEqual(4);
      expect(count(results, (r) => r.status === 200)).toBeGreaterThanOrEqual(4);
      expect(count(results, (r) => r.status === 200) + count(results, (r) => r.code === "concurrent_limit")).toBe(45);
    }, 60_000);

    test("a token quota is never overdrawn by more than one request's estimate error, however many parallel streams", async () => {
      const QUOTA = 3000;
      const { id, key } = await createKey(["--quota-tokens", String(QUOTA), "--max-tokens", "200"]);
      const results = await Promise.all(Array.from({ length: 90 }, (_, i) => ask(i, key)));
      const ok = count(results, (r) => r.status === 200);
      expect(ok).toBeGreaterThan(0);
      expect(count(results, (r) => r.code === "quota_exceeded")).toBe(90 - ok);
      // Every admitted request's row is committed before its reply ended.
      const [row] = await sql`SELECT count(*)::int AS n, coalesce(sum(input_tokens + output_tokens), 0)::int AS used FROM usage_ledger WHERE key_id = ${id}`;
      expect(row.n).toBe(ok);
      const perRequest = row.used / ok;
      // Reservations (input estimate + the 200-token bound) cover what each request used, so the total stays
      // within the quota plus at most one request's worth.
      expect(row.used).toBeLessThanOrEqual(QUOTA + perRequest);
      // ...and the quota was used, not refused early: less than one request's reservation is left.
      expect(row.used).toBeGreaterThan(QUOTA - 2 * (perRequest + 200));
    }, 60_000);
  });

  describe("keys act on every instance", () => {
    test("a key created by the CLI works on every instance as soon as the command returns", async () => {
      const { key } = await createKey([]);
      const results = await Promise.all([0, 1, 2].map((i) => ask(i, key)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    });

    test("a key disabled through one instance is refused by every instance within 1 s", async () => {
      const { id, key } = await createKey([]);
      expect((await Promise.all([0, 1, 2].map((i) => ask(i, key)))).map((r) => r.status)).toEqual([200, 200, 200]);
      const res = await cluster.admin(1, `/admin/api/keys/${id}`, { method: "PATCH", body: JSON.stringify({ status: "disabled" }) });
      expect(res.status).toBe(200);
      const { elapsedMs } = await pollUntil(
        () => Promise.all([0, 1, 2].map((i) => ask(i, key))),
        (rs) => rs.every((r) => r.status === 401 || r.status === 403),
        { timeoutMs: 5000, stepMs: 20, what: "the disabled key refused everywhere" },
      );
      expect(elapsedMs).toBeLessThan(1000);
    });

    test("a limit changed by the CLI acts on every instance within 1 s", async () => {
      const { id, key } = await createKey([]);
      expect((await Promise.all([0, 1, 2].map((i) => ask(i, key)))).map((r) => r.status)).toEqual([200, 200, 200]);
      await cluster.cli(["keys", "update", id, "--deny-models", "gpt-test"]);
      const { elapsedMs } = await pollUntil(
        () => Promise.all([0, 1, 2].map((i) => ask(i, key))),
        (rs) => rs.every((r) => r.status === 403 && r.code === "model_not_allowed"),
        { timeoutMs: 5000, stepMs: 20, what: "the model refused everywhere" },
      );
      expect(elapsedMs).toBeLessThan(1000);
    });
  });

  describe("the update site across instances", () => {
    test("a release published on one instance is in every instance's latest document on the next request", async () => {
      const res = await cluster.admin(0, "/admin/api/releases", {
        method: "POST",
        body: JSON.stringify({ version: "7.0.0", assets: [{ name: "app-7.0.0-linux-x64.tar.gz", url: `http://127.0.0.1:${origin.port}/app-7.0.0-linux-x64.tar.gz` }] }),
      });
      expect(res.status).toBe(201);
      for (const i of [1, 2, 0]) {
        const doc = await (await fetch(`${cluster.instances[i]!.url}/api/v1/latest`)).json();
        expect(doc.version).toBe("7.0.0");
      }
    });

    test("an announcement published on one instance is in every instance's next list", async () => {
      const res = await cluster.admin(2, "/admin/api/announcements", {
        method: "POST",
        body: JSON.stringify({ title: "Maintenance tonight", body: "Back at 02:00.", targetSurface: "all", dismissKey: "maint-1" }),
      });
      expect([200, 201]).toContain(res.status);
      for (const i of [0, 1, 2]) {
        const list = await (await fetch(`${cluster.instances[i]!.url}/api/v1/announcements`)).json();
        expect(JSON.stringify(list)).toContain("Maintenance tonight");
      }
    });

    test("a download link minted on one instance serves on every instance (one secret, in the shared meta table)", async () => {
      const latest = await (await fetch(`${cluster.instances[0]!.url}/api/v1/latest`)).json();
      const assetId = latest.assets[0].id;
      const minted = await fetch(`${cluster.instances[1]!.url}/api/v1/download/${assetId}`, { redirect: "manual" });
      expect(minted.status).toBe(302);
      const path = new URL(minted.headers.get("location")!).pathname;
      const tries = await Promise.all([0, 1, 2, 0, 1, 2].map((i) => fetch(`${cluster.instances[i]!.url}${path}`).then(async (r) => (await r.arrayBuffer(), r.status))));
      // A link is not spent by a request (it serves resumes until its expiry, for the client it was minted for).
      expect(tries).toEqual([200, 200, 200, 200, 200, 200]);
    });

    if (s3Missing) {
      console.warn(`shared-bucket cluster test skipped: ${s3Missing}`);
      test.skip(`asset bytes in one S3 bucket: ${s3Missing}`, () => {});
    } else {
      test("a file published by the CLI or uploaded through one instance is in the bucket and downloads from every instance", async () => {
        const dir = mkdtempSync(join(tmpdir(), "gantry-cluster-files-"));
        try {
          const cliBytes = crypto.getRandomValues(new Uint8Array(300_000));
          const file = join(dir, "app-8.0.0-linux-x64.AppImage");
          await Bun.write(file, cliBytes);
          await cluster.cli(["releases", "publish", "8.0.0", file]);
          const uploaded = crypto.getRandomValues(new Uint8Array(100_000));
          const put = await cluster.admin(1, "/admin/api/releases/8.0.0/assets/app-8.0.0-windows-x64-setup.exe", { method: "PUT", body: uploaded });
          expect(put.status).toBe(201);
          const expected = new Map([
            ["app-8.0.0-linux-x64.AppImage", sha256(cliBytes)],
            ["app-8.0.0-windows-x64-setup.exe", sha256(uploaded)],
          ]);
          for (const i of [0, 1, 2]) {
            const doc = await (await fetch(`${cluster.instances[i]!.url}/api/v1/latest`)).json();
            expect(doc.version).toBe("8.0.0");
            for (const asset of doc.assets) {
              // Mint on one instance, download (following the redirect into the bucket) through the next.
              const minted = await fetch(`${cluster.instances[i]!.url}/api/v1/download/${asset.id}`, { redirect: "manual" });
              const path = new URL(minted.headers.get("location")!).pathname;
              const res = await fetch(`${cluster.instances[(i + 1) % 3]!.url}${path}`);
              expect(res.status).toBe(200);
              expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(expected.get(asset.name)!);
              expect(asset.sha256).toBe(`sha256:${expected.get(asset.name)}`);
            }
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }, 60_000);
    }

    test("heartbeats taken by any instance are committed, and each client id is counted online once", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `cluster-client-${i}`);
      // Every client reports to every instance.
      const acks = await Promise.all(
        ids.flatMap((id) =>
          [0, 1, 2].map((i) =>
            fetch(`${cluster.instances[i]!.url}/api/v1/client/heartbeat`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-app-client-id": id },
              body: JSON.stringify({ app: "myapp", version: "1.0.0", platform: "linux", arch: "x64" }),
            }).then((r) => r.status),
          ),
        ),
      );
      expect(acks.every((s) => s === 200)).toBe(true);
      // Acknowledged = committed: the rows are in PostgreSQL now.
      const [row] = await sql`SELECT count(*)::int AS n FROM clients WHERE client_id LIKE 'cluster-client-%'`;
      expect(row.n).toBe(12);
      for (const i of [0, 1, 2]) {
        const stats = await (await cluster.admin(i, "/admin/api/stats/clients")).json();
        expect(stats.online).toBe(12);
      }
    });

    test("one address's new client ids are limited across the instances together (Redis), not per instance", async () => {
      // A /64 of its own each run (IPv6 clients are counted by /64), so no earlier run's count is met in Redis.
      const address = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
      const hourBefore = Math.floor(Date.now() / 3_600_000);
      const statuses = await Promise.all(
        Array.from({ length: 300 }, (_, n) =>
          fetch(`${cluster.instances[n % 3]!.url}/api/v1/client/heartbeat`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-app-client-id": `flood-${n}-${crypto.randomUUID()}`, "x-forwarded-for": address },
            body: "{}",
          }).then((r) => r.status),
        ),
      );
      // 50 an hour for the address, whichever instance each heartbeat reached (twice that if the hour turned).
      const turned = Math.floor(Date.now() / 3_600_000) !== hourBefore;
      expect(count(statuses, (s) => s === 200)).toBe(turned ? count(statuses, (s) => s === 200) : 50);
      expect(count(statuses, (s) => s === 200)).toBeLessThanOrEqual(100);
      expect(count(statuses, (s) => s === 429)).toBe(300 - count(statuses, (s) => s === 200));
    });
  });
}
