/**
 * What the "am I up to date?" endpoints share (Tauri's dynamic endpoint, Squirrel.Mac): the client names the
 * version it runs; the offer for it (offer.ts, with that version deciding a paused rollout) is answered when it is
 * newer, else 204 No Content, which both updaters read as "no update". The documents of a plan are rendered once
 * per release generation per key; a request only chooses.
 */
import { corsOf } from "../../http/cors";
import { renderDocument, whenReady, type RenderedDocument } from "../../http/document-cache";
import { compareVersions } from "../../releases/rules/versions";
import { DOCUMENT_CACHE_CONTROL, documentReply } from "../../http/revalidation";
import type { Release } from "../../releases/release-repository";
import type { FeedContext } from "./feed-context";
import { chooseOffer, planOffer, type OfferPlan } from "../rules/offer";

export const CLIENT_ID_HEADER = "X-App-Client-ID";

function upToDate(request: Request, vary: string | undefined): Response {
  const headers: Record<string, string> = { "cache-control": DOCUMENT_CACHE_CONTROL, ...corsOf(request) };
  if (vary) headers.vary = vary;
  return new Response(null, { status: 204, headers });
}

export interface VersionCheck<T> {
  /** The cache key of this plan (protocol, base URL, platform, arch, …). */
  key: string;
  pick: (r: Release) => T | null;
  build: (r: Release, pick: T) => unknown;
  clientId: string | null;
  /** The version the client runs, as it sent it. */
  current: string;
}

export function versionCheckReply<T>(ctx: FeedContext, request: Request, check: VersionCheck<T>): Response | Promise<Response> {
  const docs = ctx.documents.getValue(check.key, async () => {
    const plan: OfferPlan<T> = planOffer(await ctx.deps.releases.offered(), check.pick);
    const rendered = new Map<Release, RenderedDocument>();
    for (const o of [...(plan.base ? [plan.base] : []), ...plan.staged]) rendered.set(o.release, renderDocument(check.build(o.release, o.pick)));
    return { plan, rendered };
  });
  return whenReady(docs, ({ plan, rendered }) => {
    const vary = plan.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
    // The version the client runs is in its request: it decides a paused rollout, no heartbeat needed.
    const offer = chooseOffer(plan, check.clientId, check.current);
    if (!offer || compareVersions(offer.release.version, check.current) <= 0) return upToDate(request, vary);
    return documentReply(request, rendered.get(offer.release)!, vary);
  });
}
