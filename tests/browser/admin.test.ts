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
] as const;

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
    g = await startGantry({ config: { upstreamUrl: upstream.url, syncGithub: "acme/app", syncApiUrl: github.apiUrl } });
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
    g.deps.ledgerWriter.flush();
    await page.goto(`${g.url}/admin/keys`);
    const row = page.locator("#keys-table tbody tr", { hasText: "browser-key" });
    await waitForText(row.locator('td[data-label="Requests"]'), /^3$/);
    await waitForText(row.locator('td[data-label="Tokens"]'), /^480$/);
    await row.locator("button", { hasText: "Usage" }).click();
    expect(await chartPoints(page, "#usage-chart-tokens")).toBeGreaterThan(0);
    expect(await page.locator("#usage-chart-tokens path.line").count()).toBe(2);
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
    g.reloadKeys(); // the server picks up key changes within a second; the test does not wait for it
    expect((await fetch(`${g.url}/v1/models`, authed(secret))).status).toBe(403);
    await row().locator("button", { hasText: "Enable" }).click();
    await waitForText(row().locator(".badge"), /^active$/);
  }, TEST_TIMEOUT_MS);

  test("the overview charts show the traffic", async () => {
    await page.goto(`${g.url}/admin`);
    expect(await chartPoints(page, "#chart-requests")).toBeGreaterThan(0);
    expect(await chartPoints(page, "#chart-tokens")).toBeGreaterThan(0);
    expect(await chartPoints(page, "#chart-latency")).toBeGreaterThan(0);
    await waitForText(page.locator("#cards"), "Requests");
    await screenshot(page, "overview-desktop");
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
    await page.locator("#preview-client .mock-modal .mock-title", { hasText: "Maintenance tonight" }).waitFor();
    await waitForText(page.locator("#preview-home .not-shown"), "Not shown on the home page");
    // A bad value is reported by the preview while typing.
    await page.fill('#ann-form input[name="minVersion"]', "abc");
    await page.locator("#preview-error", { hasText: "minVersion" }).waitFor();
    await page.fill('#ann-form input[name="minVersion"]', "1.0.0");
    await page.locator("#preview-error:empty").waitFor({ state: "attached" });
    await screenshot(page, "announcements-editor-desktop");
    await page.click("#ann-save");
    const row = page.locator("#ann-table tbody tr", { hasText: "Maintenance tonight" });
    await row.waitFor();

    const doc = await (await fetch(`${g.url}/api/v1/announcements?surface=client&version=1.2.0`)).json();
    const item = doc.announcements.find((a: any) => a.title === "Maintenance tonight");
    expect(item).toMatchObject({ level: "warning", targetSurface: "client", ctaUrl: "https://status.example.com", minVersion: "1.0.0" });
    const home = await (await fetch(`${g.url}/api/v1/announcements?surface=home&version=1.2.0`)).json();
    expect(home.announcements.find((a: any) => a.title === "Maintenance tonight")).toBeUndefined();

    await row.locator("button", { hasText: "Re-show" }).click();
    await page.locator("dialog button", { hasText: "Re-show" }).click();
    await page.locator(".toast", { hasText: "New dismiss key" }).waitFor();
    const after = await (await fetch(`${g.url}/api/v1/announcements?surface=client&version=1.2.0`)).json();
    expect(after.announcements.find((a: any) => a.title === "Maintenance tonight").dismissKey).not.toBe(item.dismissKey);
    await screenshot(page, "announcements-desktop");
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
    g.deps.engagement.stats.sample();
    await page.goto(`${g.url}/admin/clients`);
    expect(await chartPoints(page, "#by-version")).toBe(2);
    expect(await chartPoints(page, "#by-platform")).toBe(3);
    expect(await chartPoints(page, "#by-runtime")).toBe(2);
    expect(await page.locator("#by-version rect.bar").count()).toBe(2);
    expect(await chartPoints(page, "#online-chart")).toBeGreaterThan(0);
    await waitForText(page.locator("#client-cards"), "Online now3");
    await screenshot(page, "clients-desktop");
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
    await page.locator('.release[data-version="v2.0.0"], .release[data-version="2.0.0"]').first().waitFor({ timeout: 10_000 });
    await screenshot(page, "releases-desktop");
  }, TEST_TIMEOUT_MS);

  test("phone-sized screens: every page fits and renders", async () => {
    const { context: phone, watch: phoneWatch } = await newContext(browser, g.url, "phone");
    try {
      const p = await phone.newPage();
      await p.goto(`${g.url}/admin/sign-in`);
      await screenshot(p, "sign-in-phone");
      await signIn(p, g);
      for (const [name, path] of PAGES) {
        await p.goto(g.url + path);
        await p.waitForLoadState("networkidle");
        if (name === "keys") {
          await p.locator("#keys-table tbody tr", { hasText: "browser-key" }).locator("button", { hasText: "Usage" }).click();
          await chartPoints(p, "#usage-chart-tokens");
        }
        if (name === "overview") await chartPoints(p, "#chart-requests");
        if (name === "clients") await chartPoints(p, "#by-version");
        // Nothing wider than the screen (tables scroll inside their own box).
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect({ name, overflow }).toEqual({ name, overflow: 0 });
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
