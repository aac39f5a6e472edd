/**
 * Tauri v2's endpoints (tauri-feed.ts builds the documents): the dynamic `/update/tauri/{target}/{arch}/{current}`,
 * 204 when the client is up to date, else the update as JSON; and the static `/update/tauri/latest.json`. An app
 * that sets `X-App-Client-ID` among its updater headers is placed in staged rollouts by that id, and its check
 * counts it as online; the dynamic endpoint's current version is what decides a paused rollout for it.
 */
import { publicBaseUrl } from "../../../http/public-url";
import { corsOf } from "../../cors";
import { renderDocument, whenReady, type RenderedDocument } from "../../document-cache";
import { pickRendered } from "../../document-variants";
import { rolloutClientId } from "../../releases/rollout";
import { compareVersions } from "../../releases/versions";
import { DOCUMENT_CACHE_CONTROL, documentReply } from "../../revalidation";
import type { Release } from "../../types";
import { feedNotFound, renderOffers, type FeedContext } from "../feed-context";
import { chooseOffer, planOffer } from "../offer";
import { countUpdateCheck } from "../update-check";
import { buildTauriStatic, buildTauriUpdate, parseTauriRequest, tauriBundle } from "./tauri-feed";

const CLIENT_ID_HEADER = "X-App-Client-ID";

function upToDate(request: Request, vary: string | undefined): Response {
  const headers: Record<string, string> = { "cache-control": DOCUMENT_CACHE_CONTROL, ...corsOf(request) };
  if (vary) headers.vary = vary;
  return new Response(null, { status: 204, headers });
}

export function tauriHandlers(ctx: FeedContext) {
  const { deps, documents, reportedVersion } = ctx;
  return {
    dynamic(request: Request, target: string, arch: string, current: string, bundleType: string | undefined): Response | Promise<Response> {
      const q = parseTauriRequest(target, arch, current, bundleType);
      const baseUrl = publicBaseUrl(request, deps.config);
      const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER));
      if (clientId !== null) countUpdateCheck(deps, null, { clientId, version: current.slice(0, 64), platform: q.platform, arch: q.arch, runtime: "tauri" });
      const docs = documents.getValue(`tauri\n${baseUrl}\n${q.platform}\n${q.arch}\n${q.bundleType ?? ""}`, async () => {
        const plan = planOffer(await deps.releases.offered(), (r) => tauriBundle(r, q.platform, q.arch, q.bundleType));
        const rendered = new Map<Release, RenderedDocument>();
        for (const o of [...(plan.base ? [plan.base] : []), ...plan.staged]) rendered.set(o.release, renderDocument(buildTauriUpdate(o.release, o.pick, baseUrl)));
        return { plan, rendered };
      });
      return whenReady(docs, ({ plan, rendered }) => {
        const vary = plan.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
        // The version the client runs is in the URL: it decides a paused rollout, no heartbeat needed.
        const offer = chooseOffer(plan, clientId, current);
        if (!offer || compareVersions(offer.release.version, current) <= 0) return upToDate(request, vary);
        return documentReply(request, rendered.get(offer.release)!, vary);
      });
    },

    static(request: Request): Response | Promise<Response> {
      const baseUrl = publicBaseUrl(request, deps.config);
      const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER));
      const variants = documents.getValue(`tauri-static\n${baseUrl}`, async () =>
        renderOffers(planOffer(await deps.releases.offered(), (r) => buildTauriStatic(r, baseUrl)), (_r, doc) => doc, renderDocument),
      );
      return whenReady(variants, (v) => {
        const vary = v.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
        const reply = (doc: RenderedDocument) => (doc.empty ? feedNotFound(request, "No release has a signed Tauri bundle yet.", vary) : documentReply(request, doc, vary));
        const doc = vary ? pickRendered(v, clientId, reportedVersion) : v.base;
        return doc instanceof Promise ? doc.then(reply) : reply(doc);
      });
    },
  };
}
