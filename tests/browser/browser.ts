/**
 * Browser-test support: Debian's Chromium driven by playwright-core, headless, plus the checks every page
 * gets (no console error or CSP violation, no request leaving the test server) and screenshots into
 * test-artifacts/screenshots/ (git-ignored; CI keeps them as artifacts).
 *
 * The tests skip, with a message, only when /usr/bin/chromium is absent (CI installs the Debian package).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { pollUntil } from "../support/poll";

export const CHROMIUM = "/usr/bin/chromium";
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.warn(`browser tests skipped: ${CHROMIUM} is not installed (apt-get install chromium)`);

/** A browser round trip per step adds up; bun's default per-test timeout is too short for a page flow. */
export const TEST_TIMEOUT_MS = 30_000;

export const SCREENSHOT_DIR = join(import.meta.dir, "..", "..", "test-artifacts", "screenshots");

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** What went wrong in the pages of a context: console errors, page errors, requests to other origins. */
export interface Watch {
  problems: string[];
}

export async function newContext(browser: Browser, origin: string, viewport: keyof typeof VIEWPORTS): Promise<{ context: BrowserContext; watch: Watch }> {
  const context = await browser.newContext({
    viewport: VIEWPORTS[viewport],
    deviceScaleFactor: 1,
    isMobile: viewport === "phone",
    hasTouch: viewport === "phone",
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const watch: Watch = { problems: [] };
  context.on("page", (page) => observe(page, origin, watch));
  return { context, watch };
}

function observe(page: Page, origin: string, watch: Watch): void {
  page.on("console", (msg) => {
    // A refused request (e.g. a deliberate 401 in a test) is the test's business; script errors and CSP reports are not.
    if (msg.type() === "error" && !/Failed to load resource/.test(msg.text())) watch.problems.push(`console: ${msg.text()}`);
  });
  page.on("pageerror", (err) => watch.problems.push(`page error: ${err.message}`));
  page.on("request", (req) => {
    const url = req.url();
    if (!url.startsWith(origin) && !url.startsWith("data:")) watch.problems.push(`external request: ${url}`);
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  // From the top, so the sticky header sits where it belongs in a full-page image.
  await page.evaluate(() => window.scrollTo({ top: 0, behavior: "instant" }));
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Waits until an SVG chart inside `selector` has been drawn, and returns its data-points count. */
export async function chartPoints(page: Page, selector: string): Promise<number> {
  const svg = page.locator(`${selector} svg.chart`).first();
  await svg.waitFor({ state: "attached", timeout: 10_000 });
  return Number(await svg.getAttribute("data-points"));
}

/**
 * Polls a locator's text until it contains `expected` (a string) or matches it (a RegExp, tested on the
 * trimmed text). bun's expect does not retry like Playwright's own, and the pages update after each click.
 */
export async function waitForText(locator: Locator, expected: string | RegExp, timeoutMs = 10_000): Promise<string> {
  const matches = (text: string | null) =>
    text !== null && (typeof expected === "string" ? text.includes(expected) : expected.test(text.trim()));
  // Each probe waits a little for the element to exist; pollUntil bounds the whole wait.
  const read = () => locator.first().textContent({ timeout: 1000 }).catch(() => null);
  const { value } = await pollUntil(read, matches, { timeoutMs, stepMs: 50, what: `text matching ${String(expected)}` });
  return value!;
}
