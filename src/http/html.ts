/**
 * What every server-rendered page shares: escaping, the document head (viewport, no indexing, the shared
 * stylesheet, at most one module script) and the HTML response. No inline script or style anywhere, so the
 * Content-Security-Policy can forbid both.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** From `<!doctype html>` to `</head>`; `extra` is trusted markup (meta tags) put before the title. */
export function pageHead(title: string, assetBase: string, script: string | null, extra = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
${extra}<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetBase}/app.css">
${script ? `<script type="module" src="${assetBase}/${script}"></script>\n` : ""}</head>`;
}

export function htmlResponse(html: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8", ...headers } });
}

/** A page outside the back office (the portal, /docs): the shared head, the body, a toast area for its script. */
export function standalonePage(opts: { title: string; assetBase: string; script: string; body: string }): string {
  return `${pageHead(opts.title, opts.assetBase, opts.script)}
<body>
${opts.body}
<div id="toast" role="status" aria-live="polite"></div>
</body>
</html>`;
}
