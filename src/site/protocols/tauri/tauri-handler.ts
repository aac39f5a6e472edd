/**
 * Tauri v2's endpoints (tauri-feed.ts builds the documents): the dynamic `/update/tauri/{target}/{arch}/{current}`,
 * 204 when the client is up to date, else the update as JSON; and the static `/update/tauri/latest.json`. An app
 * that sets `X-App-Client-ID` among its updater headers is placed in staged rollouts by that id, and its check
 * counts it as online; the dynamic endpoint's current version is what decides a paused rollout for it.
 */
import { publicBaseUrl } from "../../../http/public-url";
import { renderDocument, whenReady, type RenderedDocument } from "../../http/document-cache";
import { pickRendered } from "../../releases/document-variants";
import { rolloutClientId } from "../../releases/rules/rollout";
import { documentReply } from "../../http/revalidation";
import { feedNotFound, renderOffers, type FeedContext } from "../shared/feed-context";
import { planOffer } from "../rules/offer";
import { countUpdateCheck } from "../shared/update-check";
import { CLIENT_ID_HEADER, versionCheckReply } from "../shared/version-check";
import { buildTauriStatic, buildTauriUpdate, parseTauriRequest, tauriBundle } from "./rules/tauri-feed";

export function tauriHandlers(ctx: FeedContext) {
  const { deps, documents, reportedVersion } = ctx;
  return {
    dynamic(request: Request, target: string, arch: string, current: string, bundleType: string | undefined): Response | Promise<Response> {
      const q = parseTauriRequest(target, arch, current, bundleType);
      const baseUrl = publicBaseUrl(request, deps.config);
      const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER));
      if (clientId !== null) countUpdateCheck(deps, null, { clientId, version: current.slice(0, 64), platform: q.platform, arch: q.arch, runtime: "tauri" });
      return versionCheckReply(ctx, request, {
        key: `tauri\n${baseUrl}\n${q.platform}\n${q.arch}\n${q.bundleType ?? ""}`,
        pick: (r) => tauriBundle(r, q.platform, q.arch, q.bundleType),
        build: (r, bundle) => buildTauriUpdate(r, bundle, baseUrl),
        clientId,
        current,
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
