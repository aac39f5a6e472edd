/**
 * The back office in a real browser against a real server with a fake upstream: sign in, create a key and
 * use it through the gateway, see its usage; create an announcement (with its live preview) and find it in
 * /api/v1/announcements; see the client charts after heartbeats; publish a release by upload and run a sync.
 * Every page is screenshotted at desktop and phone width; no page may log an error, break the CSP or
 * request anything from another origin.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { bytesOf, startFakeGitHub, type FakeGitHub } from "../support/fake-github";
import { authed, startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";
import { HAS_CHROMIUM, chartPoints, TEST_TIMEOUT_MS, launch, newContext, screenshot, waitForText, type Watch } from "./browser";

const PAGES = [
  ["overview", "/admin"],
  ["keys", "/admin/keys"],
  ["announcements", "/admin/announcements"],
  ["releases", "/admin/releases"],
  ["clients", "/admin/clients"],
  ["upstreams", "/admin/upstreams"],
] as const;

/** The y-axis labels of a chart, as drawn. */
async function yTicks(page: Page, selector: string): Promise<string[]> {
  await page.locator(`${selector} svg.chart`).first().waitFor({ state: "attached" });
  return page.locator(`${selector} svg.chart text.y-tick`).allTextContents();
}

/** "12", "1.5k", "2M": a whole number of units (k, M and G only shorten whole counts). */
const WHOLE_TICK = /^\d+(\.\d+)?[kMG]$|^\d+$/;

/** The names of the fields a form has marked invalid. */
function invalidFields(page: Page, form: string): Promise<string[]> {
  return page.locator(`${form} [aria-invalid="true"]`).evaluateAll((els) => els.map((e) => (e as HTMLInputElement).name));
}

async function signIn(page: Page, g: Gantry): Promise<void> {
  await page.goto(`${g.url}/admin`);
  expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
  await page.fill('input[name="token"]', TEST_ADMIN_TOKEN);
  await Promise.all([page.waitForURL(`${g.url}/admin`), page.click('button[type="submit"]')]);
}

describe.skipIf(!HAS_CHROMIUM)("back office in Chromium", () => {
  let upstream: FakeUpstream;
  let github: FakeGitHub;
  let g: Gantry;
  let browser: Browser;
  let context: BrowserContext;
  let watch: Watch;
  let page: Page;
  let secret = "";

  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "text", text: "Hello from the fake upstream", usage: { input_tokens: 120, output_tokens: 40 } } });
    github = startFakeGitHub({
      perPage: 100,
      releases: [{ id: 10, tag: "v2.0.0", body: "Synced from GitHub", assets: [{ id: 101, name: "web-2.0.0.zip", bytes: bytesOf("web", 4096) }] }],
    });
    // The fake GitHub is on loopback: allowed explicitly, as an operator would.
    g = await startGantry({ config: { upstreamUrl: upstream.url, syncGithub: "acme/app", syncApiUrl: github.apiUrl, allowedFetchHosts: ["127.0.0.1"] } });
    browser = await launch();
    ({ context, watch } = await newContext(browser, g.url, "desktop"));
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await g?.stop();
    await upstream?.close();
    await github?.stop();
  }, TEST_TIMEOUT_MS);

  test("a signed-out browser gets the sign-in page; a wrong token is refused; the right one signs in", async () => {
    await page.goto(`${g.url}/admin/keys`);
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
    await screenshot(page, "sign-in-desktop");
    await page.fill('input[name="token"]', "not-the-token");
    await page.click('button[type="submit"]');
    await waitForText(page.locator(".message"), "not valid");
    await signIn(page, g);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "gantry_admin")!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe("Strict");
    expect(session.value).not.toContain(TEST_ADMIN_TOKEN);
  }, TEST_TIMEOUT_MS);

  test("create a key: the secret is shown once with a copy button", async () => {
    await page.goto(`${g.url}/admin/keys`);
    await page.click("#new-key");
    await page.fill('#key-form input[name="name"]', "browser-key");
    await page.fill('#key-form input[name="rpm"]', "100");
    await page.fill('#key-form input[name="quotaTokens"]', "100000");
    await page.click("#key-save");
    secret = (await page.locator("#new-secret-value").textContent())!;
    expect(secret).toMatch(/^gk-[A-Za-z0-9_-]{20,}$/);
    await page.click("#new-secret button:has-text('Copy')");
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);
    await page.locator("#keys-table tbody tr", { hasText: "browser-key" }).waitFor();
    await screenshot(page, "keys-created-desktop");
    // Reloading shows the list but never the secret again.
    await page.reload();
    await page.locator("#keys-table tbody tr", { hasText: "browser-key" }).waitFor();
    expect(await page.content()).not.toContain(secret);
  }, TEST_TIMEOUT_MS);

  test("the key works through the gateway and its usage shows up in the UI", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${g.url}/v1/responses`, authed(secret, { model: "demo-mini", input: "hello", stream: false }));
      expect(res.status).toBe(200);
      expect((await res.json()).output_text ?? "").toContain("Hello from the fake upstream");
    }
    await g.deps.ledger.flush();
    await page.goto(`${g.url}/admin/keys`);
    const row = page.locator("#keys-table tbody tr", { hasText: "browser-key" });
    await waitForText(row.locator('td[data-label="Requests"]'), /^3$/);
    await waitForText(row.locator('td[data-label="Tokens"]'), /^480$/);
    await row.locator("button", { hasText: "Usage" }).click();
    expect(await chartPoints(page, "#usage-chart-tokens")).toBeGreaterThan(0);
    expect(await page.locator("#usage-chart-tokens path.line").count()).toBe(2);
    // The three calls were kept (store defaults to true): the key's stored responses, with their size.
    const stored = page.locator("#usage-cards .card", { hasText: "Stored responses" });
    await waitForText(stored.locator(".value"), /^3$/);
    await waitForText(stored.locator(".sub"), /^\d+(\.\d)? (B|KiB)$/);
    await screenshot(page, "keys-desktop");
  }, TEST_TIMEOUT_MS);

  test("edit a key's limits and models, disable and enable it", async () => {
    const row = () => page.locator("#keys-table tbody tr", { hasText: "browser-key" });
    await row().locator("button", { hasText: "Edit" }).click();
    await page.fill('#key-form input[name="rpm"]', "7");
    await page.selectOption('#key-form select[name="modelMode"]', "allow");
    await page.fill('#key-form textarea[name="models"]', "demo-*, gpt-5*");
    await page.click("#key-save");
    await waitForText(row().locator('td[data-label="Limits"]'), "7 rpm");
    await waitForText(row().locator('td[data-label="Models"]'), "only demo-*, gpt-5*");
    await row().locator("button", { hasText: "Disable" }).click();
    await waitForText(row().locator(".badge"), /^disabled$/);
    await g.reloadKeys(); // the server picks up key changes within a second; the test does not wait for it
    expect((await fetch(`${g.url}/v1/models`, authed(secret))).status).toBe(403);
    await row().locator("button", { hasText: "Enable" }).click();
    await waitForText(row().locator(".badge"), /^active$/);
  }, TEST_TIMEOUT_MS);

  test("a bad key form lists every problem, marks each field, and shows no success notice", async () => {
    await page.goto(`${g.url}/admin/keys`);
    await page.click("#new-key");
    await page.fill('#key-form input[name="name"]', "bad-input");
    await page.fill('#key-form input[name="rpm"]', "-1");
    await page.fill('#key-form input[name="rpd"]', "2.5");
    // 0 is refused as the API refuses it: a key is blocked by disabling it, not by a zero limit.
    await page.fill('#key-form input[name="concurrency"]', "0");
    await page.fill('#key-form input[name="notBefore"]', "2030-01-01T00:00:00Z");
    await page.fill('#key-form input[name="expiresAt"]', "2029-01-01T00:00:00Z");
    await page.click("#key-save");
    await page.locator("#key-form .form-problems").waitFor();
    const lines = await page.locator("#key-form .form-problems li").allTextContents();
    expect(lines.length).toBe(4);
    expect(lines[0]).toStartWith("Requests / minute:");
    expect(lines[1]).toStartWith("Requests / day:");
    expect(lines[2]).toContain("1 or more");
    expect(lines[3]).toStartWith("Expires at");
    expect(await invalidFields(page, "#key-form")).toEqual(["rpm", "rpd", "concurrency", "expiresAt"]);
    // A visible mark too, not only the attribute: the marked field's border is the danger colour.
    const border = (sel: string) => page.locator(sel).evaluate((e) => getComputedStyle(e).borderTopColor);
    expect(await border('#key-form input[name="rpm"]')).not.toBe(await border('#key-form input[name="maxTokens"]'));
    expect(await page.locator('#key-form input[name="rpm"]').getAttribute("aria-describedby")).toBeTruthy();
    await screenshot(page, "keys-form-problems-desktop");

    // The server's objection (a taken name) marks its field by the envelope's `param`.
    for (const f of ["rpm", "rpd", "concurrency", "notBefore", "expiresAt"]) await page.fill(`#key-form input[name="${f}"]`, "");
    await page.fill('#key-form input[name="name"]', "browser-key");
    await page.click("#key-save");
    await waitForText(page.locator("#key-form .form-problems"), "exists already");
    expect(await invalidFields(page, "#key-form")).toEqual(["name"]);
    expect(await page.locator("#toast .toast.ok").count()).toBe(0);
    expect(await page.locator("#new-secret").count()).toBe(0);
    await page.click("#key-cancel");
  }, TEST_TIMEOUT_MS);

  test("the Keys page shows each key's state and validity, not 'active' for an expired key", async () => {
    const now = Date.now();
    await g.createKey({ name: "expired-key", expiresAt: now - 86_400_000 });
    await g.createKey({ name: "future-key", notBefore: now + 10 * 86_400_000 });
    await page.goto(`${g.url}/admin/keys`);
    const row = (name: string) => page.locator("#keys-table tbody tr", { hasText: name });
    await waitForText(row("expired-key").locator(".badge"), /^expired$/);
    await waitForText(row("expired-key").locator('td[data-label="State"]'), "expired " + new Date(now - 86_400_000).toISOString().slice(0, 10));
    await waitForText(row("future-key").locator(".badge"), /^not yet valid$/);
    await waitForText(row("future-key").locator('td[data-label="State"]'), "from ");
    await waitForText(row("browser-key").locator(".badge"), /^active$/);
  }, TEST_TIMEOUT_MS);

  test("an error notice goes when a later action succeeds", async () => {
    await g.createKey({ name: "doomed-key" });
    await page.goto(`${g.url}/admin/keys`);
    const row = page.locator("#keys-table tbody tr", { hasText: "doomed-key" });
    await row.waitFor();
    const id = await row.getAttribute("data-id");
    expect((await g.admin(`/admin/api/keys/${id}`, { method: "DELETE" })).status).toBe(204);
    await row.locator("button", { hasText: "Disable" }).click(); // the page still lists it: 404
    await page.locator("#toast .toast.error").waitFor();
    expect(await page.locator("#toast .toast.ok").count()).toBe(0);
    await page.click("#new-key");
    await page.fill('#key-form input[name="name"]', "after-an-error");
    await page.click("#key-save");
    await page.locator("#new-secret").waitFor();
    expect(await page.locator("#toast .toast.error").count()).toBe(0);
  }, TEST_TIMEOUT_MS);

  test("the overview charts show the traffic", async () => {
    await page.goto(`${g.url}/admin`);
    expect(await chartPoints(page, "#chart-requests")).toBeGreaterThan(0);
    expect(await chartPoints(page, "#chart-tokens")).toBeGreaterThan(0);
    expect(await chartPoints(page, "#chart-latency")).toBeGreaterThan(0);
    await waitForText(page.locator("#cards"), "Requests");
    // Counts: whole-number ticks, and a title that names the bucket.
    await waitForText(page.locator("#title-requests"), /^Requests per minute$/);
    for (const chart of ["#chart-requests", "#chart-tokens", "#chart-online"]) {
      const ticks = await yTicks(page, chart);
      expect({ chart, ticks: ticks.filter((t) => !WHOLE_TICK.test(t)) }).toEqual({ chart, ticks: [] });
    }
    await screenshot(page, "overview-desktop");
    await page.click('#range button[data-range="30d"]');
    await waitForText(page.locator("#title-requests"), /^Requests per 12 hours$/);
    await waitForText(page.locator("#title-tokens"), /^Tokens per 12 hours$/);
    for (const chart of ["#chart-requests", "#chart-tokens"]) {
      const ticks = await yTicks(page, chart);
      expect(ticks.length).toBeGreaterThan(1);
      expect({ chart, ticks: ticks.filter((t) => !WHOLE_TICK.test(t)) }).toEqual({ chart, ticks: [] });
    }
    expect(await page.locator("#main").textContent()).not.toContain("per minute");
    await screenshot(page, "overview-30d-desktop");
  }, TEST_TIMEOUT_MS);

  test("create an announcement with a live preview; it is served by /api/v1/announcements; re-show changes its key", async () => {
    await page.goto(`${g.url}/admin/announcements`);
    await page.click("#new-ann");
    await page.fill('#ann-form input[name="title"]', "Maintenance tonight");
    await page.fill('#ann-form textarea[name="body"]', "The service restarts at 22:00 UTC.");
    await page.selectOption('#ann-form select[name="targetSurface"]', "client");
    await page.selectOption('#ann-form select[name="level"]', "warning");
    await page.fill('#ann-form input[name="ctaText"]', "Details");
    await page.fill('#ann-form input[name="ctaUrl"]', "https://status.example.com");
    // One control for the display form: it sets type and displayType alike.
    expect(await page.locator('#ann-form [name="type"]').count()).toBe(0);
    await page.locator("#preview-client .mock-modal .mock-title", { hasText: "Maintenance tonight" }).waitFor();
    await waitForText(page.locator("#preview-home .not-shown"), "Not shown on the home page");
    // A bad value is reported by the preview while typing.
    await page.fill('#ann-form input[name="minVersion"]', "abc");
    await page.locator("#preview-error", { hasText: "minVersion" }).waitFor();
    await page.fill('#ann-form input[name="minVersion"]', "1.0.0");
    await page.locator("#preview-error:empty").waitFor({ state: "attached" });
    await page.selectOption('#ann-form select[name="displayType"]', "toast");
    await page.locator("#preview-client .mock-toast").waitFor();
    await screenshot(page, "announcements-editor-desktop");
    await page.click("#ann-save");
    const row = page.locator("#ann-table tbody tr", { hasText: "Maintenance tonight" });
    await row.waitFor();

    const doc = await (await fetch(`${g.url}/api/v1/announcements?surface=client&version=1.2.0`)).json();
    const item = doc.announcements.find((a: any) => a.title === "Maintenance tonight");
    expect(item).toMatchObject({ level: "warning", targetSurface: "client", ctaUrl: "https://status.example.com", minVersion: "1.0.0", type: "toast", displayType: "toast" });
    await waitForText(row.locator('td[data-label="Versions"]'), "≥ 1.0.0");
    const home = await (await fetch(`${g.url}/api/v1/announcements?surface=home&version=1.2.0`)).json();
    expect(home.announcements.find((a: any) => a.title === "Maintenance tonight")).toBeUndefined();

    await row.locator("button", { hasText: "Re-show" }).click();
    await page.locator("dialog button", { hasText: "Re-show" }).click();
    await page.locator(".toast", { hasText: "New dismiss key" }).waitFor();
    const after = await (await fetch(`${g.url}/api/v1/announcements?surface=client&version=1.2.0`)).json();
    expect(after.announcements.find((a: any) => a.title === "Maintenance tonight").dismissKey).not.toBe(item.dismissKey);
    await screenshot(page, "announcements-desktop");
  }, TEST_TIMEOUT_MS);

  test("an announcement form lists the page's problems and the server's, each field marked; the table shows version ranges", async () => {
    await page.goto(`${g.url}/admin/announcements`);
    await page.click("#new-ann");
    await page.fill('#ann-form input[name="title"]', "Half done");
    await page.fill('#ann-form input[name="minVersion"]', "abc");
    await page.fill('#ann-form textarea[name="locales"]', "{not json");
    await page.click("#ann-save");
    await waitForText(page.locator("#ann-form .form-problems"), "From version");
    const lines = await page.locator("#ann-form .form-problems li").allTextContents();
    expect(lines.map((l) => l.split(":")[0])).toEqual(["Body", "Translations (JSON)", "From version"]);
    expect((await invalidFields(page, "#ann-form")).sort()).toEqual(["body", "locales", "minVersion"]);
    expect(await page.locator("#toast .toast.ok").count()).toBe(0);
    await screenshot(page, "announcements-form-problems-desktop");
    await page.fill('#ann-form textarea[name="body"]', "Only for the 1.1 line.");
    await page.fill('#ann-form textarea[name="locales"]', "");
    await page.fill('#ann-form input[name="minVersion"]', "1.1.0");
    await page.fill('#ann-form input[name="maxVersion"]', "1.1.9");
    await page.click("#ann-save");
    const row = page.locator("#ann-table tbody tr", { hasText: "Half done" });
    await waitForText(row.locator('td[data-label="Versions"]'), "1.1.0–1.1.9");
    await page.locator("#toast .toast.ok").waitFor();
  }, TEST_TIMEOUT_MS);

  test("client charts render after heartbeats", async () => {
    const fleet: Array<[string, Record<string, string>]> = [
      ["c1", { app: "myapp", version: "1.2.0", platform: "windows", arch: "x64", runtime: "electron", locale: "en-US" }],
      ["c2", { app: "myapp", version: "1.2.0", platform: "macos", arch: "arm64", runtime: "electron", locale: "zh-CN" }],
      ["c3", { app: "myapp", version: "1.1.0", platform: "linux", arch: "x64", runtime: "tauri", locale: "de-DE" }],
    ];
    for (const [id, body] of fleet) {
      const res = await fetch(`${g.url}/api/v1/client/heartbeat`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-app-client-id": id },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    }
    await g.deps.engagement.stats.sample();
    await page.goto(`${g.url}/admin/clients`);
    expect(await chartPoints(page, "#by-version")).toBe(2);
    expect(await chartPoints(page, "#by-platform")).toBe(3);
    expect(await chartPoints(page, "#by-runtime")).toBe(2);
    expect(await page.locator("#by-version rect.bar").count()).toBe(2);
    expect(await chartPoints(page, "#online-chart")).toBeGreaterThan(0);
    await waitForText(page.locator("#client-cards"), "Online now3");
    await screenshot(page, "clients-desktop");

    // A client that arrives after the minute's sample: the card and the chart's current bucket both count it.
    const late = await fetch(`${g.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-client-id": "c4" },
      body: JSON.stringify({ app: "myapp", version: "1.2.0", platform: "windows", arch: "x64", runtime: "electron", locale: "en-US" }),
    });
    expect(late.status).toBe(200);
    await page.reload();
    await waitForText(page.locator("#client-cards"), "Online now4");
    await page.locator('#online-chart svg.chart[data-last="4"]').waitFor({ state: "attached" });
    await page.goto(`${g.url}/admin`);
    await waitForText(page.locator("#cards"), "Clients online4");
    await page.locator('#chart-online svg.chart[data-last="4"]').waitFor({ state: "attached" });
  }, TEST_TIMEOUT_MS);

  test("publish a release by upload; run a sync and see its result", async () => {
    await page.goto(`${g.url}/admin/releases`);
    await page.fill('#publish-form input[name="version"]', "1.5.0");
    await page.fill('#publish-form textarea[name="notes"]', "Uploaded from the browser");
    await page.setInputFiles('#publish-form input[name="files"]', [
      { name: "myapp-1.5.0-windows-x64-setup.exe", mimeType: "application/octet-stream", buffer: Buffer.from("MZ fake installer bytes") },
    ]);
    await page.click('#publish-form button[type="submit"]');
    const block = page.locator('.release[data-version="1.5.0"]');
    await block.waitFor();
    await waitForText(block, "myapp-1.5.0-windows-x64-setup.exe");
    expect(await block.locator(".badge.mirror").count()).toBe(1);
    const expectedSha = new Bun.CryptoHasher("sha256").update("MZ fake installer bytes").digest("hex");
    expect(await block.locator(`[title="sha256:${expectedSha}"]`).count()).toBe(1);

    await page.click("#sync-start");
    await page.locator("#sync-status", { hasText: "Last sync of acme/app" }).waitFor({ timeout: 15_000 });
    await waitForText(page.locator("#sync-status .badge").first(), /^ok$/);
    const synced = page.locator('.release[data-version="v2.0.0"], .release[data-version="2.0.0"]').first();
    await synced.waitFor({ timeout: 10_000 });
    // The release /api/v1/latest offers is marked, and only that one; counts are pluralised.
    await waitForText(synced.locator(".badge.latest"), /^latest$/);
    expect(await page.locator(".release .badge.latest").count()).toBe(1);
    expect(await block.locator(".badge.latest").count()).toBe(0);
    await waitForText(block.locator(".release-meta"), "1 asset ·");
    expect(await page.locator("#releases").textContent()).not.toMatch(/\b1 (assets|downloads|releases)\b/);
    await waitForText(page.locator("#release-count"), /^2 releases$/);
    await screenshot(page, "releases-desktop");

    // A failed publish marks the field and never looks like a success.
    await page.fill('#publish-form input[name="version"]', "not a version");
    await page.click('#publish-form button[type="submit"]');
    await page.locator("#publish-form .form-problems").waitFor();
    expect(await invalidFields(page, "#publish-form")).toEqual(["version"]);
    expect(await page.locator("#toast .toast.ok").count()).toBe(0);
  }, TEST_TIMEOUT_MS);

  test("a release's staged rollout: online clients running it, set a percentage, pause, resume, yank", async () => {
    const hb = await fetch(`${g.url}/api/v1/client/heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-client-id": "rollout-c1" },
      body: JSON.stringify({ app: "myapp", version: "v1.5.0", platform: "windows", arch: "x64" }),
    });
    expect(hb.status).toBe(200);
    await page.goto(`${g.url}/admin/releases`);
    const block = page.locator('.release[data-version="1.5.0"]');
    await block.waitFor();
    await waitForText(block.locator(".online-clients"), /^1 online$/);
    expect(await block.locator(".badge.rollout").count()).toBe(0);
    const state = async () => (await (await g.admin("/admin/api/releases/1.5.0")).json()) as any;

    await block.locator('.rollout-controls input[name="percent"]').fill("30");
    await block.locator('.rollout-controls button[type="submit"]').click();
    await waitForText(page.locator('.release[data-version="1.5.0"] .badge.rollout'), /^rollout 30%$/);
    expect(await state()).toMatchObject({ rolloutPercent: 30, rolloutPaused: false, yanked: false });
    await screenshot(page, "releases-rollout-desktop");
    // "Rollout [30] %" and its buttons on one line: the label no taller than the field in it, and every control's
    // middle at the same height (before: the label stacked its word, the field and the % in a column).
    const boxes = await page
      .locator('.release[data-version="1.5.0"] .rollout-controls > *, .release[data-version="1.5.0"] .rollout-controls input')
      .evaluateAll((els) => els.map((e) => { const r = e.getBoundingClientRect(); return { tag: e.tagName, middle: r.top + r.height / 2, height: r.height }; }));
    const label = boxes.find((b) => b.tag === "LABEL")!;
    const field = boxes.find((b) => b.tag === "INPUT")!;
    expect(label.height).toBeLessThan(field.height + 4);
    const middles = boxes.map((b) => b.middle);
    expect(Math.max(...middles) - Math.min(...middles)).toBeLessThan(4);

    await page.locator('.release[data-version="1.5.0"] .rollout-controls button', { hasText: "Pause" }).click();
    await waitForText(page.locator('.release[data-version="1.5.0"] .badge.rollout'), /^rollout 30% · paused$/);
    expect(await page.locator('.release[data-version="1.5.0"] .rollout-controls button[type="submit"]').isDisabled()).toBe(true);
    expect(await state()).toMatchObject({ rolloutPercent: 30, rolloutPaused: true });

    await page.locator('.release[data-version="1.5.0"] .rollout-controls button', { hasText: "Resume" }).click();
    await waitForText(page.locator('.release[data-version="1.5.0"] .badge.rollout'), /^rollout 30%$/);

    await page.locator('.release[data-version="1.5.0"] .rollout-controls button', { hasText: "Yank" }).click();
    await waitForText(page.locator('.release[data-version="1.5.0"] .badge.rollout'), /^yanked$/);
    expect(await state()).toMatchObject({ yanked: true });
    await page.locator('.release[data-version="1.5.0"] .rollout-controls button', { hasText: "Unyank" }).click();
    await waitForText(page.locator('.release[data-version="1.5.0"] .badge.rollout'), /^rollout 30%$/);
    await page.locator('.release[data-version="1.5.0"] .rollout-controls input[name="percent"]').fill("100");
    await page.locator('.release[data-version="1.5.0"] .rollout-controls button[type="submit"]').click();
    await page.locator('.release[data-version="1.5.0"] .badge.rollout').waitFor({ state: "detached" });
    expect(await state()).toMatchObject({ rolloutPercent: 100, rolloutPaused: false, yanked: false });
  }, TEST_TIMEOUT_MS);

  test("the Upstreams page shows each account's state, deadline, reason and counts; test, disable and enable work", async () => {
    const until = Date.now() + 120_000;
    g.deps.poolEvents.attempt("default");
    g.deps.poolEvents.failure("default", "rate_limited");
    await g.deps.poolState.cool("default", null, until, "rate_limited");
    await page.goto(`${g.url}/admin/upstreams`);
    const row = () => page.locator("#upstreams-table tbody tr", { hasText: "default" });
    await waitForText(row().locator(".badge"), /^cooling$/);
    await waitForText(row().locator('td[data-label="Why"]'), "rate_limited");
    expect(await row().locator('td[data-label="Cooling until"]').textContent()).not.toBe("–");
    await waitForText(row().locator('td[data-label="Failures"]'), "rate limited 1");
    await row().locator("button", { hasText: "Test" }).click();
    await waitForText(page.locator("#upstream-test"), /answered \(200\) in \d+ ms/);
    await row().locator("button", { hasText: "Disable" }).click();
    await page.locator("dialog button.danger", { hasText: "Disable" }).click();
    await waitForText(row().locator(".badge"), /^disabled$/);
    expect((await g.deps.poolState.read(["default"])).get("default")!.disabled).toEqual({ reason: "disabled by an operator", manual: true });
    await row().locator("button", { hasText: "Enable" }).click();
    await waitForText(row().locator(".badge"), /^healthy$/);
    await screenshot(page, "upstreams-desktop");
  }, TEST_TIMEOUT_MS);

  test("phone-sized screens: every page fits and renders", async () => {
    const { context: phone, watch: phoneWatch } = await newContext(browser, g.url, "phone");
    try {
      const p = await phone.newPage();
      await p.goto(`${g.url}/admin/sign-in`);
      await screenshot(p, "sign-in-phone");
      await signIn(p, g);
      // Every section's link is inside the screen and leads to its page.
      for (const [, path] of PAGES) {
        await p.goto(`${g.url}/admin`);
        const link = p.locator(`header nav a[href="${path}"]`);
        const box = (await link.boundingBox())!;
        expect({ path, inside: box.x >= 0 && box.x + box.width <= 390 && box.y >= 0 && box.y + box.height <= 844 }).toEqual({ path, inside: true });
        await Promise.all([p.waitForURL(g.url + path), link.click()]);
        expect(await p.locator(`header nav a[aria-current="page"]`).getAttribute("href")).toBe(path);
      }
      for (const [name, path] of PAGES) {
        await p.goto(g.url + path);
        await p.waitForLoadState("networkidle");
        if (name === "keys") {
          await p.locator("#keys-table tbody tr", { hasText: "browser-key" }).locator("button", { hasText: "Usage" }).click();
          await chartPoints(p, "#usage-chart-tokens");
        }
        if (name === "overview") await chartPoints(p, "#chart-requests");
        if (name === "clients") await chartPoints(p, "#by-version");
        if (name === "announcements") await p.locator("#ann-table tbody tr", { hasText: "Half done" }).waitFor();
        if (name === "releases") await p.locator(".release").first().waitFor();
        if (name === "upstreams") await p.locator("#upstreams-table tbody tr", { hasText: "default" }).waitFor();
        // Nothing wider than the screen (tables scroll inside their own box).
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect({ name, overflow }).toEqual({ name, overflow: 0 });
        // Dates, keys, versions and file names in tables stay on one line each.
        const broken = await p.locator("table .nowrap").evaluateAll((els) =>
          els.filter((e) => e.getClientRects().length > 1 || e.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(e).lineHeight || "20")).map((e) => e.textContent),
        );
        expect({ name, broken }).toEqual({ name, broken: [] });
        await screenshot(p, `${name}-phone`);
      }
      expect(phoneWatch.problems).toEqual([]);
    } finally {
      await phone.close();
    }
  }, TEST_TIMEOUT_MS);

  test("no page logged an error, broke the CSP or requested another origin", async () => {
    for (const [name, path] of PAGES) {
      await page.goto(g.url + path);
      await page.waitForLoadState("networkidle");
      await screenshot(page, `${name}-final-desktop`);
    }
    expect(watch.problems).toEqual([]);
  }, TEST_TIMEOUT_MS);
});
