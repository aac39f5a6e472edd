/**
 * Server-rendered HTML shells of the back office: the page frame (navigation, CSRF meta tag, the page's own
 * script) and the sign-in page. Pages fill themselves from the JSON API with their script; nothing here is
 * inline script or style, so the Content-Security-Policy can forbid both.
 */

import { escapeHtml, pageHead as head } from "../http/html";

export const ADMIN_NAV = [
  { path: "/admin", id: "overview", label: "Overview" },
  { path: "/admin/keys", id: "keys", label: "Keys" },
  { path: "/admin/announcements", id: "announcements", label: "Announcements" },
  { path: "/admin/releases", id: "releases", label: "Releases" },
  { path: "/admin/clients", id: "clients", label: "Clients" },
  { path: "/admin/upstreams", id: "upstreams", label: "Upstreams" },
] as const;

export type AdminPageId = (typeof ADMIN_NAV)[number]["id"];

export function adminPage(opts: { page: AdminPageId; title: string; csrf: string; body: string }): string {
  const nav = ADMIN_NAV.map(
    (n) => `<a href="${n.path}"${n.id === opts.page ? ' aria-current="page"' : ""}>${n.label}</a>`,
  ).join("");
  return `${head(`${opts.title} · Gantry`, "/admin/assets", `${opts.page}.js`, `<meta name="csrf-token" content="${escapeHtml(opts.csrf)}">\n`)}
<body data-page="${opts.page}">
<header class="top"><a class="brand" href="/admin">Gantry</a><nav aria-label="Sections">${nav}</nav><button id="sign-out" class="ghost small" type="button">Sign out</button></header>
<main id="main">
<h1>${escapeHtml(opts.title)}</h1>
${opts.body}
</main>
<div id="toast" role="status" aria-live="polite"></div>
</body>
</html>`;
}

/** The sign-in form works without JavaScript: a plain POST of the token, answered by a redirect. */
export function signInPage(opts: { message?: string; next?: string }): string {
  return `${head("Sign in · Gantry", "/admin/assets", null)}
<body>
<div class="center"><div class="panel box">
<h1>Gantry back office</h1>
<p class="muted">Sign in with the admin token (<code>GANTRY_ADMIN_TOKEN</code>, or the token printed on first start).</p>
${opts.message ? `<p class="message" role="alert">${escapeHtml(opts.message)}</p>` : ""}
<form method="post" action="/admin/sign-in">
<label>Admin token<input name="token" type="password" autocomplete="current-password" required autofocus maxlength="1024"></label>
${opts.next ? `<input type="hidden" name="next" value="${escapeHtml(opts.next)}">` : ""}
<button type="submit">Sign in</button>
</form>
</div></div>
</body>
</html>`;
}
