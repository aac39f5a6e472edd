/** The landing page (/) in a real browser: styled by the shared stylesheet, no CSP report, no sideways scroll. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startGantry, type Gantry } from "../support/harness";
import { HAS_CHROMIUM, TEST_TIMEOUT_MS, launch, newContext, screenshot, type VIEWPORTS } from "./browser";

describe.skipIf(!HAS_CHROMIUM)("landing page in Chromium", () => {
  let g: Gantry;
  let browser: Browser;

  beforeAll(async () => {
    g = await startGantry();
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  }, TEST_TIMEOUT_MS);

  for (const viewport of ["desktop", "phone"] as Array<keyof typeof VIEWPORTS>) {
    test(`links to the back office, portal and docs (${viewport})`, async () => {
      const { context, watch } = await newContext(browser, g.url, viewport);
      try {
        const page = await context.newPage();
        await page.goto(`${g.url}/`);
        // The stylesheet applied (the panels have their border), so the page is not bare HTML.
        const border = await page.locator("section.panel").first().evaluate((el) => getComputedStyle(el).borderTopStyle);
        expect(border).toBe("solid");
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBe(0);
        // No table needs a sideways scroll of its own either.
        const hidden = await page.$$eval(".table-wrap", (els) => els.map((el) => el.scrollWidth - el.clientWidth));
        expect(hidden.every((n) => n <= 0)).toBe(true);
        await screenshot(page, `landing-${viewport}`);
        await page.click("text=Key portal");
        await page.waitForURL(`${g.url}/portal`);
        expect(watch.problems).toEqual([]);
      } finally {
        await context.close();
      }
    }, TEST_TIMEOUT_MS);
  }
});
