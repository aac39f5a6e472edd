/**
 * Velopack's `/update/velopack/releases.{channel}.json` (velopack-feed.ts builds it): rendered once per release
 * generation, base URL and channel, one variant per staged rollout, picked by an `X-App-Client-ID` header or a
 * `client_id` in the feed's query; the `localVersion` Velopack adds decides a paused rollout and is counted as the
 * version the client runs. With nothing to offer the feed has no assets (Velopack: up to date). A package the feed
 * names is fetched from beside it, `/update/velopack/{name}.nupkg`: a 302 to a `/dl/` link, as every feed download.
 */
import { AppError } from "../../../errors";
import { clientAddress } from "../../../http/client-address";
import { publicBaseUrl } from "../../../http/public-url";
import { corsOf } from "../../http/cors";
import { renderDocument, whenReady, type RenderedDocument } from "../../http/document-cache";
import { pickRendered } from "../../releases/document-variants";
import { readParam } from "../../http/rules/query-params";
import { rolloutClientId } from "../../releases/rules/rollout";
import { isValidVersion } from "../../releases/rules/versions";
import { documentReply } from "../../http/revalidation";
import { feedNotFound, renderOffers, type FeedContext } from "../shared/feed-context";
import { planOffer } from "../rules/offer";
import { countUpdateCheck } from "../shared/update-check";
import { CLIENT_ID_HEADER } from "../shared/version-check";
import { buildVelopackFeed, parseVelopackFeedName, velopackPackages } from "./rules/velopack-feed";

const CHANNEL_PLATFORM: Record<string, "windows" | "macos" | "linux"> = { win: "windows", osx: "macos", linux: "linux" };

export function velopackHandler(ctx: FeedContext): (request: Request, file: string, query: Record<string, unknown>) => Response | Promise<Response> {
  const { deps, documents, reportedVersion } = ctx;
  const packageRedirect = async (request: Request, name: string): Promise<Response> => {
    const asset = (await deps.releases.offered()).flatMap((r) => r.assets).find((a) => a.name === name && a.fileType === "nupkg");
    if (!asset) throw new AppError("not_found", "No such package.", { param: "file" });
    const token = await deps.releases.downloads.issue(String(asset.id), clientAddress(request));
    return new Response(null, { status: 302, headers: { location: `${publicBaseUrl(request, deps.config)}/dl/${token}`, "cache-control": "no-store", ...corsOf(request) } });
  };
  return (request, file, query) => {
    if (/\.nupkg$/i.test(file)) return packageRedirect(request, file);
    const channel = parseVelopackFeedName(file);
    if (channel === null) return feedNotFound(request, `No feed '${file.slice(0, 64)}': Velopack asks for releases.{channel}.json.`);
    const baseUrl = publicBaseUrl(request, deps.config);
    const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER) ?? readParam(query, "client_id"));
    const local = readParam(query, "localVersion");
    const running = isValidVersion(local) ? local : null;
    if (clientId !== null) countUpdateCheck(deps, null, { clientId, version: running, platform: CHANNEL_PLATFORM[channel] ?? null, runtime: "velopack" });
    const docs = documents.getValue(`velopack\n${baseUrl}\n${channel}`, async () => {
      const plan = planOffer(await deps.releases.offered(), (r) => velopackPackages(r, channel));
      return { variants: renderOffers(plan, (r, packages) => buildVelopackFeed(r, packages), renderDocument), none: renderDocument({ Assets: [] }) };
    });
    return whenReady(docs, ({ variants, none }) => {
      const vary = variants.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
      const reply = (doc: RenderedDocument) => documentReply(request, doc.empty ? none : doc, vary);
      const doc = vary ? pickRendered(variants, clientId, async (id) => running ?? (await reportedVersion(id))) : variants.base;
      return doc instanceof Promise ? doc.then(reply) : reply(doc);
    });
  };
}
