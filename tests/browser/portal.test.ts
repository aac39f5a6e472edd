/**
 * The key holders' portal and the API docs page in a real browser: a real key (used through the gateway
 * first) shows its limits, models, quota and a usage chart; a wrong key shows only the generic message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";
import { HAS_CHROMIUM, chartPoints, TEST_TIMEOUT_MS, launch, newContext, screenshot, type VIEWPORTS } from "./browser";

describe.skipIf(!HAS_CHROMIUM)("portal and docs in Chromium", () => {
  let upstream: FakeUpstream;
  let g: Gantry;
  let browser: Browser;
  let key = "";

  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "text", text: "hi", usage: { input_tokens: 300, output_tokens: 100 } } });
    g = await startGantry({ config: { upstreamUrl: upstream.url } });
    key = await g.createKey({ name: "portal-user", rpm: 30, quotaTokens: 50_000, modelMode: "allow", models: ["demo-mini"] });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "hello", stream: false }));
      expect(res.status).toBe(200);
      await res.text();
    }
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await g?.stop();
    await upstream?.close();
  }, TEST_TIMEOUT_MS);

  for (const viewport of ["desktop", "phone"] as Array<keyof typeof VIEWPORTS>) {
    test(`a real key sees its own usage (${viewport})`, async () => {
      const { context, watch } = await newContext(browser, g.url, viewport);
      try {
        const page = await context.newPage();
        await page.goto(`${g.url}/portal`);
        await screenshot(page, `portal-entry-${viewport}`);
        await page.fill("#key-input", key);
        await page.click('#key-form button[type="submit"]');
        await page.locator("#view h1", { hasText: "portal-user" }).waitFor();
        // The key never reaches the URL and the field is emptied.
        expect(page.url()).toBe(`${g.url}/portal`);
        expect(await page.inputValue("#key-input")).toBe("");
        const text = (await page.locator("#view").textContent())!;
        expect(text).toContain("demo-mini");
        expect(text).toContain("49,200 tokens"); // 50,000 - 2 x 400
        expect(await chartPoints(page, "#view")).toBeGreaterThan(0);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBe(0);
        await screenshot(page, `portal-${viewport}`);
        expect(watch.problems).toEqual([]);
      } finally {
        await context.close();
      }
    }, TEST_TIMEOUT_MS);
  }

  test("times are UTC and say so, as in the back office, whatever the browser's zone", async () => {
    const expiring = await g.createKey({ name: "portal-expiring", expiresAt: Date.parse("2031-03-04T05:06:00Z") });
    // A browser far from UTC: a local time would read 13:06 here.
    const context = await browser.newContext({ timezoneId: "Asia/Shanghai", viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      await page.goto(`${g.url}/portal`);
      await page.fill("#key-input", expiring);
      await page.click('#key-form button[type="submit"]');
      await page.locator("#view h1", { hasText: "portal-expiring" }).waitFor();
      const text = (await page.locator("#view").textContent())!;
      expect(text).toContain("2031-03-04 05:06 UTC");
      expect(text).toMatch(/Updated \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    } finally {
      await context.close();
    }
  }, TEST_TIMEOUT_MS);

  test("a wrong key shows only the generic message", async () => {
    const { context } = await newContext(browser, g.url, "desktop");
    try {
      const page = await context.newPage();
      await page.goto(`${g.url}/portal`);
      await page.fill("#key-input", "gk-this-is-not-a-key");
      await page.click('#key-form button[type="submit"]');
      const message = page.locator("#key-error");
      await message.waitFor({ state: "visible" });
      await expect(message.textContent()).resolves.toContain("This key cannot be shown");
      expect(await page.locator("#view").isHidden()).toBe(true);
      await screenshot(page, "portal-wrong-key-desktop");
    } finally {
      await context.close();
    }
  }, TEST_TIMEOUT_MS);

  for (const viewport of ["desktop", "phone"] as Array<keyof typeof VIEWPORTS>) {
    test(`the API docs page renders the OpenAPI document locally, its Markdown as markup (${viewport})`, async () => {
      const { context, watch } = await newContext(browser, g.url, viewport);
      try {
        const page = await context.newPage();
        await page.goto(`${g.url}/docs`);
        await page.locator("details.op").first().waitFor();
        expect(await page.locator("details.op").count()).toBeGreaterThanOrEqual(12);
        // The document's descriptions use `code`: shown as code elements, not as backticks.
        expect(await page.locator("#docs > .md code", { hasText: "Authorization: Bearer <API key>" }).count()).toBe(1);
        const op = page.locator("details.op", { hasText: "/v1/responses" }).first();
        await op.locator("summary").click();
        expect(await op.locator(".body > .md code").count()).toBeGreaterThan(0);
        const shown = await page.locator("#docs").evaluate((e) => [...e.querySelectorAll(".md")].map((m) => m.textContent).join("\n"));
        expect(shown).not.toContain("`");
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBe(0);
        await screenshot(page, `docs-${viewport}`);
        expect(watch.problems).toEqual([]);
      } finally {
        await context.close();
      }
    }, TEST_TIMEOUT_MS);
  }
});
