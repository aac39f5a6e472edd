/**
 * Sparkle's `/update/sparkle/appcast.xml` (sparkle-feed.ts builds it): rendered once per release generation, base
 * URL and arch, one variant per staged rollout, picked by the `client_id` an app adds to its feed's query (Sparkle's
 * `feedParametersForUpdater`) or an `X-App-Client-ID` header; without one, fully rolled-out releases only. With
 * nothing to offer the appcast has no item, which Sparkle reads as "up to date".
 */
import { AppError } from "../../../errors";
import { publicBaseUrl } from "../../../http/public-url";
import { renderText, whenReady, type RenderedDocument } from "../../http/document-cache";
import { pickRendered } from "../../releases/document-variants";
import { readParam } from "../../http/rules/query-params";
import { rolloutClientId } from "../../releases/rules/rollout";
import { documentReply } from "../../http/revalidation";
import { renderOffers, type FeedContext } from "../shared/feed-context";
import { planOffer } from "../rules/offer";
import { countUpdateCheck } from "../shared/update-check";
import { CLIENT_ID_HEADER } from "../shared/version-check";
import { buildAppcast, sparkleArch, sparkleArchive } from "./rules/sparkle-feed";
import { edSignatureOf } from "./sparkle-signature";

const XML = "application/rss+xml; charset=utf-8";
const TITLE = "Updates";

export function sparkleHandler(ctx: FeedContext): (request: Request, query: Record<string, unknown>) => Response | Promise<Response> {
  const { deps, documents, reportedVersion } = ctx;
  return (request, query) => {
    const rawArch = readParam(query, "arch");
    const arch = sparkleArch(rawArch);
    if (arch === undefined) throw new AppError("invalid_request", `Unknown arch '${rawArch.slice(0, 32)}'; expected arm64 or x86_64.`, { param: "arch" });
    const baseUrl = publicBaseUrl(request, deps.config);
    const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER) ?? readParam(query, "client_id"));
    if (clientId !== null) countUpdateCheck(deps, null, { clientId, platform: "macos", arch, runtime: "sparkle" });
    const docs = documents.getValue(`sparkle\n${baseUrl}\n${arch ?? ""}`, async () => {
      const plan = planOffer(await deps.releases.offered(), (r) => sparkleArchive(r, arch));
      const variants = renderOffers(plan, (release, archive) => buildAppcast({ release, archive, edSignature: edSignatureOf(archive.signature) }, baseUrl, TITLE), (body) => renderText(body as string | null, XML));
      return { variants, none: renderText(buildAppcast(null, baseUrl, TITLE), XML) };
    });
    return whenReady(docs, ({ variants, none }) => {
      const vary = variants.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
      const reply = (doc: RenderedDocument) => documentReply(request, doc.empty ? none : doc, vary);
      const doc = vary ? pickRendered(variants, clientId, reportedVersion) : variants.base;
      return doc instanceof Promise ? doc.then(reply) : reply(doc);
    });
  };
}
