/**
 * The nginx configuration of docs/scaling.md, as written there (only the addresses replaced), in front of three
 * instances on one PostgreSQL and one Redis: streams pass unbuffered, a key's RPM holds across the balancer, and
 * with one instance killed every request still gets an answer from the others.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nginxAvailable, nginxBinary, nginxTempPaths } from "../../bench/servers";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { redisUnavailable, redisUrl } from "../support/redis";
import { freePort } from "../reliability/serve-process";
import { CLUSTER_ADMIN_TOKEN, startCluster, type Cluster } from "./cluster";

const unavailable = postgresUnavailable() ?? redisUnavailable() ?? (nginxAvailable() ? null : "nginx is not installed (.ci/system-deps installs nginx-light)");

/** The ```nginx block of docs/scaling.md. */
function documentedConfig(): string {
  const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "scaling.md"), "utf8");
  const block = /```nginx\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/scaling.md has no nginx block");
  return block[1]!;
}

let upstream: FakeUpstream;
let cluster: Cluster;
let db: { url: string; drop(): Promise<void> };
let nginx: ReturnType<typeof Bun.spawn> | null = null;
let dir: string;
let base: string;

async function ask(key: string, input = "hello"): Promise<number> {
  const res = await fetch(`${base}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", input }),
  });
  await res.arrayBuffer();
  return res.status;
}

if (unavailable) {
  console.warn(`nginx cluster tests skipped: ${unavailable}`);
  test.skip(`nginx in front of a cluster: ${unavailable}`, () => {});
} else {
  beforeAll(async () => {
    upstream = await startFakeUpstream({
      scenario: (body) =>
        JSON.stringify(body?.input ?? "").includes("SLOW") ? { kind: "slow", delayMs: 100, deltas: 20, text: "a slow reply" } : { kind: "text", text: "a reply" },
    });
    db = await freshDatabase();
    cluster = await startCluster({ databaseUrl: db.url, redisUrl: await redisUrl(), upstreamUrl: upstream.url });
    dir = mkdtempSync(join(tmpdir(), "gantry-nginx-"));
    mkdirSync(join(dir, "tmp"), { recursive: true });
    const port = freePort();
    let servers = 0;
    const site = documentedConfig()
      .replace(/server 10\.0\.0\.\d+:8080/g, () => `server 127.0.0.1:${new URL(cluster.instances[servers++]!.url).port}`)
      .replace("listen 80;", `listen 127.0.0.1:${port};`);
    expect(servers).toBe(3);
    writeFileSync(
      join(dir, "nginx.conf"),
      `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
${nginxTempPaths(dir)}
${site}
}
`,
    );
    nginx = Bun.spawn([nginxBinary(), "-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdout: "ignore", stderr: "pipe" });
    base = `http://127.0.0.1:${port}`;
    await pollUntil(() => fetch(`${base}/healthz`).then((r) => r.status, () => 0), (s) => s === 200, { timeoutMs: 20_000, what: "nginx answering" });
  }, 120_000);

  afterAll(async () => {
    nginx?.kill();
    await nginx?.exited;
    await cluster?.close();
    await db?.drop();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe("nginx in front of three instances (docs/scaling.md)", () => {
    test("a stream's events pass while the upstream is still sending (not buffered)", async () => {
      const { key } = JSON.parse(await cluster.cli(["keys", "create", "--name", "nginx-stream", "--json"]));
      const res = await fetch(`${base}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-test", input: "SLOW", stream: true }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("response.output_text.delta")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      // The first delta is here and the upstream has 19 more to send (2 s): nginx did not hold the reply back.
      expect(text).toContain("response.output_text.delta");
      expect(upstream.open).toBeGreaterThan(0);
      while (!(await reader.read()).done) {}
    });

    test("RPM 30 through the balancer: 90 concurrent requests admit exactly 30", async () => {
      const { key } = JSON.parse(await cluster.cli(["keys", "create", "--name", "nginx-rpm", "--rpm", "30", "--json"]));
      const statuses = await Promise.all(Array.from({ length: 90 }, () => ask(key)));
      expect(statuses.filter((s) => s === 200).length).toBe(30);
      expect(statuses.filter((s) => s === 429).length).toBe(60);
    });

    test("a back-office sign-in holds on every instance behind the balancer (sessions in Redis), and so does the sign-out", async () => {
      const signIn = await fetch(`${base}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: CLUSTER_ADMIN_TOKEN }), redirect: "manual" });
      expect(signIn.status).toBe(303);
      const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
      // Round robin: six reads land on every instance twice.
      const reads = await Promise.all(Array.from({ length: 6 }, () => fetch(`${base}/admin/api/keys`, { headers: { cookie } }).then((r) => r.status)));
      expect(reads).toEqual([200, 200, 200, 200, 200, 200]);
      for (const instance of cluster.instances) expect((await fetch(`${instance.url}/admin/api/keys`, { headers: { cookie } })).status).toBe(200);
      const page = await (await fetch(`${cluster.instances[0]!.url}/admin`, { headers: { cookie } })).text();
      const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;
      const out = await fetch(`${cluster.instances[2]!.url}/admin/sign-out`, { method: "POST", headers: { cookie, "x-csrf-token": csrf }, redirect: "manual" });
      expect(out.status).toBeLessThan(400);
      for (const instance of cluster.instances) expect((await fetch(`${instance.url}/admin/api/keys`, { headers: { cookie } })).status).toBe(401);
    });

    test("links the instances make name the balancer's address, port included (Host passed as the client sent it)", async () => {
      await cluster.cli(["releases", "publish", "3.0.0", "Gantry-3.0.0-x64-setup.exe=https://example.invalid/Gantry-3.0.0-x64-setup.exe", "web-3.0.0.zip=https://example.invalid/web-3.0.0.zip"]);
      const latest = await pollUntil(
        () => fetch(`${base}/api/v1/latest`).then(async (r) => (r.status === 200 ? await r.json() : null)),
        (doc) => doc?.version === "3.0.0",
        { what: "the release through the balancer" },
      );
      // The web bundle gives the document its manifest link. The instances know no public URL here (GANTRY_PUBLIC_URL unset): the links come from the Host nginx passes.
      expect(latest.value.manifest.url).toBe(`${base}/update/latest.json`);
      expect(latest.value.download.urlTemplate).toBe(`${base}/api/v1/download/{assetId}`);
      expect(latest.value.assets[0].downloadUrl).toStartWith(`${base}/api/v1/download/`);
    });

    test("with one instance killed, every request is answered by the others", async () => {
      const { key } = JSON.parse(await cluster.cli(["keys", "create", "--name", "nginx-failover", "--json"]));
      cluster.instances[1]!.kill("SIGKILL");
      await cluster.instances[1]!.exited;
      const models = () => fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? ask(key) : models())));
      expect(statuses).toEqual(Array.from({ length: 30 }, () => 200));
    });
  });
}
