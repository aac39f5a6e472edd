/**
 * The back office's and the portal's security rules, over real HTTP: no page or admin API route answers
 * without a session or the admin token; changes need the CSRF token; the session cookie's flags; sign-in
 * guessing is slowed per address; the portal tells a wrong key nothing; the security headers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { ADMIN_NAV } from "../../src/admin/layout";
import { MIN_ANSWER_MS } from "../../src/portal/routes";
import { startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";

async function signIn(g: Gantry, token = TEST_ADMIN_TOKEN): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const res = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
  expect(res.status).toBe(303);
  const setCookie = res.headers.get("set-cookie")!;
  const cookie = setCookie.split(";")[0];
  const page = await (await fetch(`${g.url}/admin`, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1];
  return { cookie, csrf, setCookie };
}

/** Every /admin/api route the app defines, with its path parameters filled in. */
function adminApiRoutes(g: Gantry): Array<{ method: string; path: string }> {
  const seen = new Set<string>();
  const out: Array<{ method: string; path: string }> = [];
  for (const r of createApp(g.deps).routes) {
    if (!r.path.startsWith("/admin/api")) continue;
    const path = r.path.replace(/:[A-Za-z]+/g, "x1");
    const key = `${r.method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method: r.method, path });
  }
  return out;
}

describe("without a session or token", () => {
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry();
  });
  afterAll(() => g.stop());

  test("every back-office page sends the browser to sign in, with no data", async () => {
    for (const { path } of ADMIN_NAV) {
      const res = await fetch(g.url + path, { redirect: "manual" });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toStartWith("/admin/sign-in");
      expect(await res.text()).toBe("");
    }
  });

  test("every /admin/api route refuses with 401, before reading or validating the body", async () => {
    const routes = adminApiRoutes(g);
    expect(routes.length).toBeGreaterThan(20);
    for (const { method, path } of routes) {
      const hasBody = method !== "GET" && method !== "HEAD";
      const res = await fetch(g.url + path, {
        method,
        headers: hasBody ? { "content-type": "application/json" } : {},
        body: hasBody ? "{not json" : undefined,
      });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      if (method !== "HEAD") expect((await res.json()).error.code).toBe("unauthorized");
    }
  });

  test("a forged or unknown session cookie is no session", async () => {
    for (const cookie of ["gantry_admin=forged", `gantry_admin=${TEST_ADMIN_TOKEN}`, "__Host-gantry_admin=x"]) {
      expect((await fetch(`${g.url}/admin/api/keys`, { headers: { cookie } })).status).toBe(401);
      expect((await fetch(`${g.url}/admin/keys`, { headers: { cookie }, redirect: "manual" })).status).toBe(303);
    }
  });

  test("the sign-in page and the assets are open; the sign-out needs a session", async () => {
    expect((await fetch(`${g.url}/admin/sign-in`)).status).toBe(200);
    expect((await fetch(`${g.url}/admin/assets/common.js`)).status).toBe(200);
    expect((await fetch(`${g.url}/admin/assets/../api/keys`)).status).not.toBe(200);
    expect((await fetch(`${g.url}/admin/sign-out`, { method: "POST" })).status).toBe(401);
  });
});

describe("a signed-in browser", () => {
  let g: Gantry;
  let s: { cookie: string; csrf: string; setCookie: string };
  beforeAll(async () => {
    g = await startGantry();
    s = await signIn(g);
  });
  afterAll(() => g.stop());

  test("the session cookie is HttpOnly, SameSite=Strict, a random id (never the token)", () => {
    expect(s.setCookie).toMatch(/^gantry_admin=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(s.setCookie).not.toContain(TEST_ADMIN_TOKEN);
  });

  test("reads need only the cookie; every page renders with its CSRF meta tag", async () => {
    expect((await fetch(`${g.url}/admin/api/keys`, { headers: { cookie: s.cookie } })).status).toBe(200);
    for (const { path } of ADMIN_NAV) {
      const res = await fetch(g.url + path, { headers: { cookie: s.cookie } });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(`<meta name="csrf-token" content="${s.csrf}">`);
    }
  });

  test("a change without the CSRF token, with a wrong one, or from another site is refused with 403", async () => {
    const body = JSON.stringify({ name: "csrf-test" });
    const base = { cookie: s.cookie, "content-type": "application/json" };
    const attempts: Array<Record<string, string>> = [
      base,
      { ...base, "x-csrf-token": "wrong" },
      { ...base, "x-csrf-token": s.csrf, "sec-fetch-site": "cross-site" },
      { ...base, "x-csrf-token": s.csrf, origin: "https://evil.example" },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${g.url}/admin/api/keys`, { method: "POST", headers, body });
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe("forbidden");
    }
    for (const [method, path] of [["DELETE", "/admin/api/keys/x"], ["POST", "/admin/api/releases/sync"], ["PUT", "/admin/api/releases/1.0.0/assets/a.zip"]]) {
      expect((await fetch(g.url + path, { method, headers: { cookie: s.cookie } })).status).toBe(403);
    }
    expect(await g.deps.keys.list()).toHaveLength(0);
    const ok = await fetch(`${g.url}/admin/api/keys`, { method: "POST", headers: { ...base, "x-csrf-token": s.csrf, "sec-fetch-site": "same-origin" }, body });
    expect(ok.status).toBe(201);
  });

  test("scripts use the bearer token and need no CSRF token", async () => {
    const res = await g.admin("/admin/api/keys", { method: "POST", body: JSON.stringify({ name: "script-key" }) });
    expect(res.status).toBe(201);
  });

  test("sign-out ends the session on the server", async () => {
    const own = await signIn(g);
    const out = await fetch(`${g.url}/admin/sign-out`, { method: "POST", headers: { cookie: own.cookie, "x-csrf-token": own.csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(`${g.url}/admin/api/keys`, { headers: { cookie: own.cookie } })).status).toBe(401);
    // Another browser's session is untouched.
    expect((await fetch(`${g.url}/admin/api/keys`, { headers: { cookie: s.cookie } })).status).toBe(200);
  });

  test("no open redirect after sign-in", async () => {
    for (const next of ["https://evil.example", "//evil.example", "/admin/../x"]) {
      const res = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: TEST_ADMIN_TOKEN, next }), redirect: "manual" });
      expect(res.headers.get("location")).toBe("/admin");
    }
    const res = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: TEST_ADMIN_TOKEN, next: "/admin/keys" }), redirect: "manual" });
    expect(res.headers.get("location")).toBe("/admin/keys");
  });

  test("security headers on every admin, portal and docs reply", async () => {
    const replies = [
      await fetch(`${g.url}/admin/sign-in`),
      await fetch(`${g.url}/admin/keys`, { headers: { cookie: s.cookie } }),
      await fetch(`${g.url}/admin/api/keys`, { headers: { cookie: s.cookie } }),
      await fetch(`${g.url}/admin/api/keys`),
      await fetch(`${g.url}/admin/api/nope`, { headers: { cookie: s.cookie } }),
      await fetch(`${g.url}/admin/assets/app.css`),
      await fetch(`${g.url}/portal`),
      await fetch(`${g.url}/portal/api/usage`, { method: "POST" }),
      await fetch(`${g.url}/docs`),
    ];
    for (const res of replies) {
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  test("pages carry no inline script or style and load nothing from elsewhere", async () => {
    for (const path of [...ADMIN_NAV.map((n) => n.path), "/admin/sign-in", "/portal", "/docs"]) {
      const html = await (await fetch(g.url + path, { headers: { cookie: s.cookie } })).text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });
});

describe("HTTPS", () => {
  test("behind an https public URL the cookie is Secure and __Host- prefixed", async () => {
    const g = await startGantry({ config: { publicUrl: "https://gantry.example.com" } });
    try {
      const res = await fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token: TEST_ADMIN_TOKEN }), redirect: "manual" });
      expect(res.headers.get("set-cookie")).toMatch(/^__Host-gantry_admin=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await g.stop();
    }
  });
});

describe("every spelling of a guarded path is guarded like the path", () => {
  let g: Gantry;
  beforeAll(async () => {
    g = await startGantry();
  });
  afterAll(() => g.stop());

  /** Sent as written: a raw request line, so no client tidies the target first. */
  const rawGet = (target: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const { hostname, port, host } = new URL(g.url);
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      let data = "";
      Bun.connect({
        hostname,
        port: Number(port),
        socket: {
          open: (s) => void s.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`),
          data: (_s, chunk) => void (data += chunk.toString()),
          close: () => resolve({ status: Number(data.split(" ")[1]), text: data }),
          error: (_s, err) => reject(err),
        },
      }).catch(reject);
    });

  const metricsSpellings = ["/metrics", "/metrics/", "/metrics/.", "/metrics/?x=1", "/metrics?x=1", "/Metrics", "/METRICS/", "//metrics", "/%6detrics", "/%6Detrics/", "/x/../metrics/"];
  const adminSpellings = ["/admin/api/keys/", "//admin/api/keys", "/admin//api/keys", "/ADMIN/API/KEYS", "/%61dmin/api/keys", "/admin/%61pi/keys/.", "/admin/sign-in/../api/keys", "/admin/assets/%2e%2e/api/keys"];

  test("/metrics without the token: 401 however it is spelled, and no figures", async () => {
    for (const target of metricsSpellings) {
      const res = await rawGet(target);
      expect({ target, status: res.status }).toEqual({ target, status: 401 });
      expect(res.text).not.toContain("gantry_");
    }
    // With the token the spellings the router serves still answer.
    for (const target of ["/metrics/", "/metrics/?x=1"]) {
      const res = await rawGet(target, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
      expect({ target, status: res.status }).toEqual({ target, status: 200 });
    }
  });

  test("the admin API without the token: never its data, however it is spelled", async () => {
    for (const target of adminSpellings) {
      const res = await rawGet(target, { accept: "application/json" });
      expect({ target, refused: res.status === 401 || res.status === 303 || res.status === 404 }).toEqual({ target, refused: true });
      expect(res.text).not.toContain('"data"');
    }
    // A bearer token is checked on every spelling of the API: a wrong one is a 401, not a redirect to sign in.
    for (const target of ["/admin/api/keys/", "/admin//api/keys", "/ADMIN/api/keys"]) {
      expect((await rawGet(target, { authorization: "Bearer wrong" })).status).toBe(401);
    }
  });
});

describe("guessing the admin token is slowed per address, never locking the admin out", () => {
  let g: Gantry;
  let clock = Date.parse("2025-06-01T00:00:00Z");
  beforeAll(async () => {
    g = await startGantry({ now: () => clock });
  });
  afterAll(() => g.stop());

  const attempt = (token: string) => fetch(`${g.url}/admin/sign-in`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
  const timed = async (send: () => Promise<Response>) => {
    const started = performance.now();
    const res = await send();
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started, res };
  };

  test("wrong sign-ins past four wait before their 401; the right token from the same address gets in at once", async () => {
    for (let i = 0; i < 4; i++) {
      const res = await attempt(`wrong-${i}`);
      expect(res.status).toBe(401);
      expect(await res.text()).toContain("That admin token is not valid.");
    }
    const slowed = await timed(() => attempt("wrong-4"));
    expect(slowed.status).toBe(401);
    expect(slowed.ms).toBeGreaterThanOrEqual(950);

    // Someone else failing from the same address (one NAT, or a proxy without GANTRY_TRUSTED_PROXIES) while the
    // admin signs in: the right token is neither refused nor delayed, by the form, the API or /metrics.
    const guesses = Array.from({ length: 6 }, (_, i) => attempt(`parallel-wrong-${i}`).then((r) => r.status));
    const signedIn = await timed(() => attempt(TEST_ADMIN_TOKEN));
    expect(signedIn.status).toBe(303);
    expect(signedIn.res.headers.get("set-cookie")).toStartWith("gantry_admin=");
    expect(signedIn.ms).toBeLessThan(900);
    const api = await timed(() => g.admin("/admin/api/keys"));
    expect(api.status).toBe(200);
    expect(api.ms).toBeLessThan(900);
    expect((await g.admin("/metrics")).status).toBe(200);
    expect(await Promise.all(guesses)).toEqual([401, 401, 401, 401, 401, 401]);

    // A success does not wipe the failures out: the next wrong token still waits (now the 5 s bound).
    const longer = await timed(() => attempt("wrong-after-success"));
    expect(longer.status).toBe(401);
    expect(longer.ms).toBeGreaterThanOrEqual(4950);
  }, 20_000);

  test("wrong bearer tokens on the admin API and /metrics are slowed too, the right one is not", async () => {
    clock += 3_600_000 * 3;
    const wrong = (path: string) => timed(() => fetch(g.url + path, { headers: { authorization: "Bearer wrong" } }));
    for (let i = 0; i < 4; i++) {
      const res = await wrong(i % 2 ? "/metrics" : "/admin/api/keys");
      expect(res.status).toBe(401);
      expect(res.ms).toBeLessThan(900);
    }
    const slowed = await wrong("/metrics");
    expect(slowed.status).toBe(401);
    expect(slowed.res.headers.get("retry-after")).toBeNull();
    expect(slowed.ms).toBeGreaterThanOrEqual(950);
    const right = await timed(() => g.admin("/admin/api/keys"));
    expect(right.status).toBe(200);
    expect(right.ms).toBeLessThan(900);
  }, 20_000);
});

describe("the portal tells a wrong key nothing", () => {
  let g: Gantry;
  let good: string;
  let disabled: string;
  let other: string;
  beforeAll(async () => {
    g = await startGantry();
    good = await g.createKey({ name: "holder", rpm: 60, quotaTokens: 1_000_000, modelMode: "allow", models: ["demo-*"] });
    disabled = await g.createKey({ name: "off", status: "disabled" });
    other = await g.createKey({ name: "someone-else-secret-name" });
  });
  afterAll(() => g.stop());

  const usage = (key: string | null, extra: Record<string, string> = {}) =>
    fetch(`${g.url}/portal/api/usage`, { method: "POST", headers: key === null ? extra : { authorization: `Bearer ${key}`, ...extra } });

  test("unknown, disabled, malformed and missing keys get the same answer, no sooner than a real one", async () => {
    const answers: Array<{ status: number; body: string; ms: number }> = [];
    for (const key of ["gk-unknownkeyunknownkeyunknownkey", disabled, "", null]) {
      const started = performance.now();
      const res = await usage(key);
      answers.push({ status: res.status, body: await res.text(), ms: performance.now() - started });
    }
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.body).toBe(answers[0].body);
      expect(a.body).not.toContain("off");
      expect(a.ms).toBeGreaterThanOrEqual(MIN_ANSWER_MS - 5);
    }
    const started = performance.now();
    const ok = await usage(good);
    expect(ok.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(MIN_ANSWER_MS - 5);
  });

  test("a real key sees only itself: limits, models, remaining quota, usage", async () => {
    const body = await (await usage(good)).json();
    expect(body.key).toMatchObject({ name: "holder", status: "active", modelMode: "allow", models: ["demo-*"] });
    expect(body.key.limits).toMatchObject({ rpm: 60, quotaTokens: 1_000_000 });
    expect(body.key.usage.remainingTokens).toBe(1_000_000);
    expect(body.daily).toHaveLength(30);
    expect(body.today).toMatchObject({ requests: 0 });
    const text = JSON.stringify(body);
    expect(text).not.toContain("someone-else-secret-name");
    expect(text).not.toContain(other);
    expect(text).not.toContain(good);
    expect(text).not.toMatch(/"hash"|"id":"key_/);
  });

  test("the key is never accepted in a URL", async () => {
    expect((await fetch(`${g.url}/portal/api/usage?key=${good}`)).status).toBe(405);
    expect((await fetch(`${g.url}/portal/api/usage?key=${good}`, { method: "POST" })).status).toBe(401);
  });

});

describe("the portal slows wrong keys, never locking a right key out", () => {
  let g: Gantry;
  let good: string;
  beforeAll(async () => {
    g = await startGantry();
    good = await g.createKey({ name: "holder" });
  });
  afterAll(() => g.stop());

  const usage = (key: string) => fetch(`${g.url}/portal/api/usage`, { method: "POST", headers: { authorization: `Bearer ${key}` } });

  test("wrong keys past four wait before their 401; the right key from the same address is answered at once", async () => {
    const timed = async (key: string) => {
      const started = performance.now();
      const res = await usage(key);
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started, retryAfter: res.headers.get("retry-after") };
    };
    // Four free failures, then each wrong key's answer waits (1 s, 2 s, ... at most 5 s): never a 429.
    for (let i = 0; i < 4; i++) expect((await timed(`gk-wrong-${i}`)).status).toBe(401);
    const slowed = await timed("gk-wrong-4");
    expect(slowed).toMatchObject({ status: 401, retryAfter: null });
    expect(slowed.ms).toBeGreaterThanOrEqual(950);

    // A neighbour keeps failing from the same address while the holder looks: the right key is answered at
    // the usual pace, not refused (before: 429 with Retry-After doubling up to 15 minutes).
    const guesses = Array.from({ length: 6 }, (_, i) => timed(`gk-parallel-wrong-${i}`));
    const right = await timed(good);
    expect(right.status).toBe(200);
    expect(right.ms).toBeLessThan(MIN_ANSWER_MS + 900);
    expect((await Promise.all(guesses)).map((g) => g.status)).toEqual([401, 401, 401, 401, 401, 401]);
    // A success does not wipe the failures out: the next wrong key still waits.
    expect((await timed("gk-wrong-after")).ms).toBeGreaterThanOrEqual(950);
  }, 30_000);
});
