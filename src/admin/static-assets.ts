/**
 * The browser assets of the back office, portal and docs pages, embedded in the binary as text imports and
 * served from memory with an ETag (a new binary brings new assets; browsers revalidate each load).
 * Each area serves only the files it uses.
 */
import { Elysia } from "elysia";
import { sha256Hex } from "../secrets";
import appCss from "./assets/app.css" with { type: "text" };
import announcementsJs from "./assets/announcements.browser.js" with { type: "text" };
import chartsJs from "./assets/charts.browser.js" with { type: "text" };
import timeJs from "./assets/time.browser.js" with { type: "text" };
import clientsJs from "./assets/clients.browser.js" with { type: "text" };
import commonJs from "./assets/common.browser.js" with { type: "text" };
import docsJs from "./assets/docs.browser.js" with { type: "text" };
import formErrorsJs from "./assets/form-errors.browser.js" with { type: "text" };
import keysJs from "./assets/keys.browser.js" with { type: "text" };
import markdownJs from "./assets/markdown.browser.js" with { type: "text" };
import overviewJs from "./assets/overview.browser.js" with { type: "text" };
import releasesJs from "./assets/releases.browser.js" with { type: "text" };
import upstreamsJs from "./assets/upstreams.browser.js" with { type: "text" };
import portalJs from "../portal/portal.browser.js" with { type: "text" };

interface Asset {
  body: string;
  type: string;
  etag: string;
}

const JS = "text/javascript; charset=utf-8";

function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${sha256Hex(body).slice(0, 32)}"` };
}

const ASSETS: Record<string, Asset> = {
  "app.css": asset(appCss, "text/css; charset=utf-8"),
  "common.js": asset(commonJs, JS),
  "charts.js": asset(chartsJs, JS),
  "time.js": asset(timeJs, JS),
  "form-errors.js": asset(formErrorsJs, JS),
  "overview.js": asset(overviewJs, JS),
  "keys.js": asset(keysJs, JS),
  "announcements.js": asset(announcementsJs, JS),
  "releases.js": asset(releasesJs, JS),
  "clients.js": asset(clientsJs, JS),
  "upstreams.js": asset(upstreamsJs, JS),
  "portal.js": asset(portalJs, JS),
  "docs.js": asset(docsJs, JS),
  "markdown.js": asset(markdownJs, JS),
};

const AREAS = {
  "/admin": ["app.css", "common.js", "time.js", "charts.js", "form-errors.js", "overview.js", "keys.js", "announcements.js", "releases.js", "clients.js", "upstreams.js"],
  "/portal": ["app.css", "time.js", "charts.js", "portal.js"],
  "/docs": ["app.css", "docs.js", "markdown.js"],
} as const;

export function serveAsset(area: keyof typeof AREAS, name: string, request: Request): Response {
  const found = (AREAS[area] as readonly string[]).includes(name) ? ASSETS[name] : undefined;
  if (!found) return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  const headers = { "content-type": found.type, etag: found.etag, "cache-control": "no-cache" };
  if (request.headers.get("if-none-match") === found.etag) return new Response(null, { status: 304, headers });
  return new Response(found.body, { headers });
}

export function staticAssets() {
  const app = new Elysia({ name: "static-assets" });
  for (const area of Object.keys(AREAS) as Array<keyof typeof AREAS>) {
    app.get(`${area}/assets/:name`, ({ params, request }) => serveAsset(area, params.name, request), { detail: { hide: true } });
  }
  return app;
}
