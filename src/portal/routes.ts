/**
 * The key holders' portal: GET /portal (a page where a key is pasted) and POST /portal/api/usage, which
 * authenticates with the key as a bearer token (never in a URL) and answers with that key's own view.
 *
 * A wrong key learns nothing: unknown and disabled keys get the same message, and every answer of the usage
 * endpoint takes at least MIN_ANSWER_MS, so timing does not tell them apart either. Failures are slowed per
 * client address like the admin sign-in: past a few, a wrong key's answer is held back (at most 5 s), but a right
 * key is never refused or delayed, since an address is often shared (a NAT, an office, a proxy) and a lockout
 * would let one neighbour's failures lock everyone there out.
 */
import { Elysia } from "elysia";
import type { KeyCache } from "../gateway/keys/key-cache";
import type { KeyRepository } from "../gateway/keys/key-repository";
import type { UsageLedger } from "../gateway/usage/ledger-repository";
import { AppError, errorResponse } from "../errors";
import { bearerToken } from "../http/bearer";
import { clientAddress } from "../http/client-address";
import type { WebState } from "../http/web-state";
import { htmlResponse, standalonePage } from "../http/html";
import { DAY_MS, portalSince, portalView } from "./view";

export const MIN_ANSWER_MS = 300;
const GENERIC_FAILURE = "This key cannot be shown. Check that you pasted the whole key, or ask whoever gave it to you.";

const PAGE_BODY = `<div class="portal">
<div class="center" id="entry"><div class="panel box">
<h1>Your API key</h1>
<p class="muted">Paste your key to see its limits, allowed models, remaining quota and usage. The key is sent only to this server, in a request header; it is not stored in your browser.</p>
<noscript><p class="message">This page needs JavaScript.</p></noscript>
<form id="key-form" method="post" action="/portal" autocomplete="off">
<label>API key<input id="key-input" name="key" type="password" required maxlength="300" autocomplete="off" spellcheck="false"></label>
<button type="submit">Show my usage</button>
</form>
<p class="message" id="key-error" role="alert" hidden></p>
</div></div>
<div id="view" hidden></div>
</div>`;

function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

const failure = (err: AppError): Response => errorResponse(err);

export interface PortalDeps {
  keyCache: Pick<KeyCache, "resolve">;
  keys: Pick<KeyRepository, "usage">;
  ledger: Pick<UsageLedger, "flush" | "series">;
  now: () => number;
}

export function portalRoutes(deps: PortalDeps, web: WebState) {
  const page = () => htmlResponse(standalonePage({ title: "Key usage · Gantry", assetBase: "/portal/assets", script: "portal.js", body: PAGE_BODY }));

  const answer = async (request: Request): Promise<Response> => {
    const secret = bearerToken(request.headers.get("authorization"));
    // A key created a moment ago may not be in the cache yet (it reloads when the change feed reports it).
    const cached = secret ? await deps.keyCache.resolve(secret) : null;
    if (!cached || cached.key.status !== "active") {
      await web.portalThrottle.slowFailure(clientAddress(request));
      return failure(new AppError("invalid_api_key", GENERIC_FAILURE));
    }
    // A success does not wipe the address's failures out: a guesser sharing it would start afresh each time.
    const now = deps.now();
    await deps.ledger.flush();
    const [daily, usage] = await Promise.all([deps.ledger.series(portalSince(now), DAY_MS, cached.key.id), deps.keys.usage(cached.key.id)]);
    return json(portalView(cached.key, usage, daily, now));
  };

  return new Elysia({ name: "portal" })
    .get("/portal", page, { detail: { hide: true } })
    // The form's no-JavaScript submit lands here (a POST, so the key is never in a URL); it only shows the page again.
    .post("/portal", page, { parse: "none", detail: { hide: true } })
    .post(
      "/portal/api/usage",
      async ({ request }) => {
        const started = performance.now();
        const response = answer(request);
        const rest = MIN_ANSWER_MS - (performance.now() - started);
        if (rest > 0) await Bun.sleep(rest);
        return response;
      },
      { parse: "none", detail: { hide: true } },
    );
}
