/**
 * GET /openapi.json (the public contract, generated from the app's routes by @elysiajs/openapi's generator)
 * and GET /docs (a page of our own that renders it; no CDN, no external request).
 *
 * Only the public contract is in the document: the gateway and the site API. The back office, the portal,
 * health, metrics and the docs themselves are left out ("administrative interfaces are not part of the
 * public protocol"). Routes without Elysia schemas get theirs from openapi-contract.ts, merged by path and
 * method; the generator is never given `references`, because it writes those into the live routes' hooks.
 */
import { Elysia, type AnyElysia } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi/openapi";
import { htmlResponse, standalonePage } from "./html";
import { VERSION } from "../version";
import { SITE_DOCS } from "./openapi-contract";

const PRIVATE = [/^\/admin(\/|$)/, /^\/portal(\/|$)/, /^\/docs(\/|$)/, /^\/openapi\.json$/, /^\/metrics$/, /^\/healthz$/, /^\/readyz$/];

type Operations = Record<string, Record<string, unknown>>;

export function buildOpenApiDocument(app: AnyElysia): Record<string, unknown> {
  const generated = toOpenAPISchema(app, { paths: PRIVATE, staticFile: false }) as { paths: Record<string, Operations>; components: { schemas: unknown } };
  const paths: Record<string, Operations> = {};
  for (const [path, operations] of Object.entries(generated.paths)) {
    const docs = SITE_DOCS[path];
    const merged: Operations = {};
    for (const [method, operation] of Object.entries(operations)) {
      // Routes registered with `all` (e.g. /dl/{token}) list every method; keep the documented ones.
      if (docs && !docs[method]) continue;
      merged[method] = docs ? { ...operation, ...docs[method] } : operation;
    }
    if (Object.keys(merged).length) paths[path] = merged;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Gantry public API",
      version: VERSION,
      description:
        "The model gateway (OpenAI Responses and Chat Completions compatible) and the client update and announcement site. " +
        "Gateway calls authenticate with `Authorization: Bearer <API key>`; errors are always `{\"error\": {\"message\", \"type\", \"code\", \"param\"}}`.",
    },
    tags: [
      { name: "Model gateway", description: "Conversation endpoints and the live model list." },
      { name: "Updates", description: "Latest release, downloads, legacy manifest." },
      { name: "Updater feeds", description: "The same releases for electron-updater, Tauri, Squirrel, Sparkle and Velopack." },
      { name: "Announcements" },
      { name: "Telemetry" },
    ],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key issued by the operator" } },
    },
  };
}

const DOCS_BODY = `<header class="top"><span class="brand">Gantry API</span><nav></nav><a href="/openapi.json">openapi.json</a></header>
<main id="docs"><p class="muted">Loading the API description…</p></main>`;

/** `root` gives the finished app: the document lists its routes, read once on first request (routes never change). */
export function openApiRoutes(root: () => AnyElysia) {
  let cached: string | null = null;
  return new Elysia({ name: "openapi" })
    .get("/openapi.json", () => {
      cached ??= JSON.stringify(buildOpenApiDocument(root()));
      return new Response(cached, { headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" } });
    })
    .get("/docs", () => htmlResponse(standalonePage({ title: "API · Gantry", assetBase: "/docs/assets", script: "docs.js", body: DOCS_BODY })));
}
