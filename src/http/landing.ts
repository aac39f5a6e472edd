/**
 * GET / : a small page for whoever opens the server's address in a browser (a newcomer after `gantry demo`,
 * an operator checking a deployment). It says what runs here and links to the back office, the key portal
 * and the API docs, and lists the endpoints programs call. It shows no data and needs no sign-in; the access
 * guard gives it the same security headers as the other pages (no script at all, only the shared stylesheet).
 */
import { Elysia } from "elysia";
import type { Config } from "../config";
import { escapeHtml, htmlResponse, pageHead } from "./html";
import { publicBaseUrl } from "./public-url";

/** The docs area serves the shared stylesheet without a session; the page needs nothing else. */
const ASSETS = "/docs/assets";

const GATEWAY_ENDPOINTS: Array<[method: string, path: string, what: string]> = [
  ["POST", "/v1/responses", "OpenAI Responses API (streaming or not)"],
  ["POST", "/v1/chat/completions", "OpenAI Chat Completions API"],
  ["POST", "/v1/messages", "Anthropic Messages API (Claude Code, Anthropic SDKs)"],
  ["POST", "/v1/messages/count_tokens", "a message's input tokens, counted by the upstream's tokenizer"],
  ["GET", "/v1/models", "the models your key may use (in Anthropic's shape for Anthropic's clients)"],
];

const SITE_ENDPOINTS: Array<[method: string, path: string, what: string]> = [
  ["GET", "/api/v1/latest", "the latest client release and its downloads"],
  ["GET", "/api/v1/announcements", "announcements for a client or the home page"],
  ["POST", "/api/v1/client/heartbeat", "a running client reports in"],
  ["GET", "/update/latest.json", "the legacy update manifest"],
];

function endpointRows(rows: Array<[string, string, string]>): string {
  return rows
    .map(
      ([method, path, what]) =>
        // Two columns, the description under the path: a phone shows the whole row without scrolling sideways.
        `<tr><td><span class="method ${method.toLowerCase()}">${method}</span></td><td><code>${path}</code><br><span class="muted">${escapeHtml(what)}</span></td></tr>`,
    )
    .join("\n");
}

/** Pure: the page for a server reached at `base` (scheme://host[:port]). */
export function landingPage(base: string): string {
  const b = escapeHtml(base);
  return `${pageHead("Gantry", ASSETS, null)}
<body>
<header class="top"><span class="brand">Gantry</span></header>
<main>
<h1>This server runs Gantry</h1>
<p class="muted">A model gateway (OpenAI-compatible, with per-key limits and usage) and an update and announcement site for client apps.</p>
<div class="grid3">
<section class="panel"><h2><a href="/admin">Back office</a></h2><p>Keys, usage, announcements, releases and client statistics. Sign in with the admin token.</p></section>
<section class="panel"><h2><a href="/portal">Key portal</a></h2><p>Holders of an API key see its limits, remaining quota and usage.</p></section>
<section class="panel"><h2><a href="/docs">API docs</a></h2><p>The public API, also as <a href="/openapi.json">openapi.json</a>.</p></section>
</div>
<section class="panel">
<h2>Model gateway</h2>
<p>Point an OpenAI SDK at <code>${b}/v1</code> with an API key from the operator (<code>Authorization: Bearer &lt;key&gt;</code>). The paths also answer without the <code>/v1</code> prefix.</p>
<div class="table-wrap"><table>
${endpointRows(GATEWAY_ENDPOINTS)}
</table></div>
</section>
<section class="panel">
<h2>Client update site</h2>
<p>No key needed.</p>
<div class="table-wrap"><table>
${endpointRows(SITE_ENDPOINTS)}
</table></div>
</section>
<p class="muted">Health: <a href="/healthz">/healthz</a>, <a href="/readyz">/readyz</a>.</p>
</main>
</body>
</html>`;
}

export function landingRoutes(config: Pick<Config, "publicUrl" | "trustedProxies">) {
  return new Elysia({ name: "landing" }).get("/", ({ request }) => htmlResponse(landingPage(publicBaseUrl(request, config))), {
    detail: { hide: true },
  });
}
