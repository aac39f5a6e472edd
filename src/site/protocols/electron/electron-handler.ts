/**
 * electron-updater's `/update/electron/{file}` (electron-feed.ts builds the YAML): the feed's variants rendered once
 * per release generation and base URL, one picked per request by the `x-user-staging-id` the client sends.
 */
import { publicBaseUrl } from "../../../http/public-url";
import { renderText, whenReady, type RenderedDocument } from "../../http/document-cache";
import { pickRendered, type RenderedVariants } from "../../releases/document-variants";
import { isPausedRollout, rolloutClientId } from "../../releases/rules/rollout";
import { documentReply } from "../../http/revalidation";
import type { Asset } from "../../releases/release-repository";
import { feedNotFound, renderOffers, type FeedContext } from "../shared/feed-context";
import { planOffer, type OfferPlan } from "../rules/offer";
import { countUpdateCheck } from "../shared/update-check";
import { buildElectronYml, channelTakesPrereleases, electronFiles, parseElectronFeedName } from "./rules/electron-feed";

/** electron-updater's per-install id (a UUID in `userData/.updaterId`), sent with every request. */
const STAGING_ID_HEADER = "x-user-staging-id";
const YAML = "text/yaml; charset=utf-8";

/**
 * A feed's documents: the variants picked by client id, and `anonymous`, the document for a request without one
 * (electron-updater then decides its own staging from `stagingPercentage`).
 */
interface ElectronDocuments {
  variants: RenderedVariants;
  anonymous: RenderedDocument;
}

function electronDocuments(plan: OfferPlan<Asset[]>, baseUrl: string): ElectronDocuments {
  const variants = renderOffers(plan, (r, files) => buildElectronYml(r, files, baseUrl), (body) => renderText(body as string | null, YAML));
  // Without an id Gantry cannot place the client in a group: the newest staged release goes out with its share
  // as stagingPercentage, and electron-updater's own staging (from its id) decides. A paused rollout takes
  // nobody new, so it is not handed to the client's own rule.
  const newest = plan.staged.find((o) => !isPausedRollout(o.release));
  const anonymous = newest ? renderText(buildElectronYml(newest.release, newest.pick, baseUrl, newest.release.rolloutPercent ?? 100), YAML) : variants.base;
  return { variants, anonymous };
}

export function electronHandler(ctx: FeedContext): (request: Request, file: string) => Response | Promise<Response> {
  const { deps, documents, reportedVersion } = ctx;
  return (request, file) => {
    const feed = parseElectronFeedName(file);
    if (!feed) return feedNotFound(request, `No feed '${file.slice(0, 64)}': electron-updater asks for latest.yml, latest-mac.yml, latest-linux.yml or latest-linux-arm64.yml (or another channel's).`);
    const baseUrl = publicBaseUrl(request, deps.config);
    const stagingId = rolloutClientId(request.headers.get(STAGING_ID_HEADER));
    if (stagingId !== null) countUpdateCheck(deps, null, { clientId: stagingId, platform: feed.platform, arch: feed.arch, runtime: "electron-updater" });
    const docs = documents.getValue(`electron\n${baseUrl}\n${file}`, async () =>
      electronDocuments(planOffer(await deps.releases.offered(), (r) => electronFiles(r, feed), { includePrerelease: channelTakesPrereleases(feed.channel) }), baseUrl),
    );
    return whenReady(docs, ({ variants, anonymous }) => {
      const vary = variants.staged.length > 0 ? STAGING_ID_HEADER : undefined;
      const reply = (doc: RenderedDocument) => (doc.empty ? feedNotFound(request, "No release has a file for this feed yet.", vary) : documentReply(request, doc, vary));
      const doc = !vary ? variants.base : stagingId === null ? anonymous : pickRendered(variants, stagingId, reportedVersion);
      return doc instanceof Promise ? doc.then(reply) : reply(doc);
    });
  };
}
