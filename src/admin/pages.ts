/**
 * The back office's HTML: sign-in and sign-out, and one page per section. Access is decided before routing
 * by http/access-guard.ts (a page needs a live session, a change its CSRF token); here the sign-in itself:
 * the token is checked in constant time, wrong tokens are slowed per client address (the failing answer waits;
 * a right token is never refused for someone else's failures), and success makes a
 * session whose random id goes into an HttpOnly, SameSite=Strict cookie (Secure over HTTPS).
 */
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { AdminAuth } from "../http/admin-auth";
import { isCrossSite } from "../http/access-guard";
import { readBodyText } from "../http/body";
import { clientAddress } from "../http/client-address";
import { isHttpsRequest, serializeCookie } from "../http/cookies";
import { SECURE_SESSION_COOKIE, SESSION_COOKIE, type WebState } from "../http/web-state";
import { htmlResponse } from "../http/html";
import { ADMIN_NAV, adminPage, signInPage, type AdminPageId } from "./layout";
import { PAGE_BODIES } from "./page-bodies";

/** Only our own page paths may be a post-sign-in destination (no open redirect). */
export function safeNext(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  return ADMIN_NAV.some((n) => n.path === value) ? value : undefined;
}

export interface AdminPagesDeps {
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  adminAuth: Pick<AdminAuth, "fingerprint" | "verifyToken">;
  log: Logger;
}

export function adminPages(deps: AdminPagesDeps, web: WebState) {
  const app = new Elysia({ name: "admin-pages" })
    .get(
      "/admin/sign-in",
      async ({ request, query }) => {
        if (await web.sessionOf(request)) return new Response(null, { status: 303, headers: { location: "/admin" } });
        return htmlResponse(signInPage({ next: safeNext(query.next) }));
      },
      { detail: { hide: true } },
    )
    .post(
      "/admin/sign-in",
      async ({ request }) => {
        if (isCrossSite(request, deps.config)) {
          return htmlResponse(signInPage({ message: "Sign in from this site's own sign-in page." }), 403);
        }
        const form = new URLSearchParams(await readBodyText(request, 8192));
        const next = safeNext(form.get("next"));
        const address = clientAddress(request);
        const fingerprint = await deps.adminAuth.fingerprint();
        if (!fingerprint || !(await deps.adminAuth.verifyToken(form.get("token")))) {
          deps.log.warn("admin sign-in failed", { address });
          await web.adminThrottle.slowFailure(address);
          return htmlResponse(signInPage({ message: "That admin token is not valid.", next }), 401);
        }
        const { id } = await web.sessions.create(fingerprint);
        const secure = isHttpsRequest(request, deps.config);
        deps.log.info("admin signed in", { address });
        return new Response(null, {
          status: 303,
          headers: { location: next ?? "/admin", "set-cookie": serializeCookie(secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, id, { secure }) },
        });
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/admin/sign-out",
      async ({ request }) => {
        await web.sessions.destroy(web.sessionIdOf(request));
        const headers = new Headers();
        headers.append("set-cookie", serializeCookie(SESSION_COOKIE, "", { secure: false, maxAgeSeconds: 0 }));
        headers.append("set-cookie", serializeCookie(SECURE_SESSION_COOKIE, "", { secure: true, maxAgeSeconds: 0 }));
        return new Response(null, { status: 204, headers });
      },
      { parse: "none", detail: { hide: true } },
    );

  for (const nav of ADMIN_NAV) {
    const page = nav.id as AdminPageId;
    app.get(
      nav.path,
      async ({ request }) => {
        const session = await web.sessionOf(request);
        // The guard let only signed-in browsers through; this is a second lock, not the first.
        if (!session) return new Response(null, { status: 303, headers: { location: "/admin/sign-in" } });
        const { title, body } = PAGE_BODIES[page];
        return htmlResponse(adminPage({ page, title, csrf: session.csrf, body }));
      },
      { detail: { hide: true } },
    );
  }
  return app;
}
