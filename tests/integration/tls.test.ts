/** HTTPS built in: self-signed certificates made here, HSTS, redirects, certificate reloads, generated URLs. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forwardedClient } from "../../src/http/client-address";
import { loadConfig } from "../../src/config";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";

let dir: string;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

async function makeCert(name: string): Promise<void> {
  const p = Bun.spawn(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, `${name}.key`), "-out", join(dir, `${name}.crt`),
      "-days", "2", "-subj", `/CN=${name}`, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
    { stdout: "ignore", stderr: "ignore" },
  );
  expect(await p.exited).toBe(0);
}

/** The subject of the certificate a new TLS connection to `port` is shown. */
async function servedSubject(port: number): Promise<string> {
  const p = Bun.spawn(["sh", "-c", `echo | timeout 5 openssl s_client -connect 127.0.0.1:${port} 2>/dev/null | openssl x509 -noout -subject`]);
  return (await new Response(p.stdout).text()).trim();
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

let g: Gantry;
let redirectPort: number;

beforeAll(async () => {
  dir = tempDir("tls");
  await makeCert("cert-one");
  await makeCert("cert-two");
  copyFileSync(join(dir, "cert-one.crt"), join(dir, "live.crt"));
  copyFileSync(join(dir, "cert-one.key"), join(dir, "live.key"));
  redirectPort = await freePort();
  g = await startGantry({ config: { tlsCert: join(dir, "live.crt"), tlsKey: join(dir, "live.key"), httpRedirectPort: redirectPort } });
});
afterAll(async () => {
  await g.stop();
});
// After the hook above: the server is stopped before its directory goes.
const tempDir = tempDirs();

/** Asks new TLS connections until one is shown the certificate `name` (a reload swaps listeners; the old one closes a moment later). */
const untilServed = (port: number, name: string) =>
  pollUntil(() => servedSubject(port), (subject) => subject.includes(name), { stepMs: 20, what: `the certificate ${name}` });

describe("HTTPS", () => {
  test("serves over TLS with HSTS", async () => {
    expect(g.url.startsWith("https://")).toBe(true);
    const res = await fetch(`${g.url}/healthz`, insecure);
    expect(res.status).toBe(200);
    expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });

  test("generated URLs are https, loopback included, when the request came over TLS", async () => {
    const port = new URL(g.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const res = await fetch(`${g.url}/api/v1/latest`, { ...insecure, headers: { host } });
      const doc = (await res.json()) as any;
      expect(doc.heartbeat.url.startsWith(`https://${host}/`)).toBe(true);
    }
  });

  test("the plain-HTTP listener only redirects, keeping path and query", async () => {
    const res = await fetch(`http://127.0.0.1:${redirectPort}/api/v1/latest?platform=windows`, { redirect: "manual" });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(`https://127.0.0.1:${new URL(g.url).port}/api/v1/latest?platform=windows`);
    // Two Host headers: no redirect built from them, a 400.
    const reply = await new Promise<string>((resolve, reject) => {
      let data = "";
      Bun.connect({
        hostname: "127.0.0.1",
        port: redirectPort,
        socket: {
          open: (s) => void s.write("GET /x HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n"),
          data: (_s, chunk) => void (data += chunk.toString()),
          close: () => resolve(data),
          error: (_s, err) => reject(err),
        },
      }).catch(reject);
    });
    expect(reply).toStartWith("HTTP/1.1 400");
    expect(reply).not.toContain("location:");
  });

  test("a new certificate is picked up without a restart; a broken one is refused and the old kept", async () => {
    const port = Number(new URL(g.url).port);
    expect(await servedSubject(port)).toContain("cert-one");
    copyFileSync(join(dir, "cert-two.crt"), join(dir, "live.crt"));
    copyFileSync(join(dir, "cert-two.key"), join(dir, "live.key"));
    expect(g.running.reloadTls()).toBe(true);
    await untilServed(port, "cert-two");
    expect((await fetch(`${g.url}/healthz`, insecure)).status).toBe(200);

    writeFileSync(join(dir, "live.crt"), "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n");
    expect(g.running.reloadTls()).toBe(false);
    expect(await servedSubject(port)).toContain("cert-two");
    expect((await fetch(`${g.url}/healthz`, insecure)).status).toBe(200);
  });
});

describe("a real server process reloads on SIGHUP", () => {
  test("renewed files take effect after SIGHUP", async () => {
    const d = tempDir("tls-proc");
    copyFileSync(join(dir, "cert-one.crt"), join(d, "c.crt"));
    copyFileSync(join(dir, "cert-one.key"), join(d, "c.key"));
    const port = await freePort();
    const proc = Bun.spawn(["./node_modules/.bin/bun", "src/main.ts", "serve", "--port", String(port), "--data-dir", join(d, "data"),
      "--tls-cert", join(d, "c.crt"), "--tls-key", join(d, "c.key"), "--admin-token", "gat-tls-test-token-00000000"], { stdout: "ignore", stderr: "ignore" });
    try {
      const healthy = () => fetch(`https://127.0.0.1:${port}/healthz`, insecure).then((r) => r.ok, () => false);
      await pollUntil(healthy, Boolean, { timeoutMs: 10_000, stepMs: 50, what: "the server to answer /healthz" });
      expect(await servedSubject(port)).toContain("cert-one");
      copyFileSync(join(dir, "cert-two.crt"), join(d, "c.crt"));
      copyFileSync(join(dir, "cert-two.key"), join(d, "c.key"));
      proc.kill("SIGHUP");
      await untilServed(port, "cert-two");
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
  }, 20_000);
});

describe("settings and proxies", () => {
  test("TLS settings are checked together", () => {
    expect(() => loadConfig({ "tls-cert": "/x.crt" }, {})).toThrow(/go together/);
    expect(() => loadConfig({ "http-redirect-port": "8081" }, {})).toThrow(/needs TLS/);
  });

  test("X-Forwarded-For counts only from trusted proxies, and only the part they vouch for", () => {
    const trusted = ["10.0.0.0/8", "192.0.2.1"];
    expect(forwardedClient("203.0.113.9", "1.2.3.4", trusted)).toBe("203.0.113.9"); // untrusted peer: ignored
    expect(forwardedClient("10.1.2.3", "198.51.100.7", trusted)).toBe("198.51.100.7");
    // The client may prepend anything; the nearest untrusted hop is the client as far as our proxies know.
    expect(forwardedClient("10.1.2.3", "6.6.6.6, 198.51.100.7, 192.0.2.1", trusted)).toBe("198.51.100.7");
    expect(forwardedClient("10.1.2.3", "not-an-ip", trusted)).toBe("10.1.2.3");
    expect(forwardedClient("10.1.2.3", null, trusted)).toBe("10.1.2.3");
  });
});
