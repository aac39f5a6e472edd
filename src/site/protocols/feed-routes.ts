/**
 * The updater feeds' routes (thin: validate, delegate): electron-updater's `/update/electron/{feed}.yml` and the
 * download addresses every feed gives, `/update/files/{assetId}/{name}`. Feeds are rendered once per release
 * generation (document-cache.ts) per base URL and feed, one variant per staged rollout, and a request only picks
 * one by its client id.
 */
import { Elysia } from "elysia";
import type { Config } from "../../config";
import { AppError, errorResponse } from "../../errors";
import { clientAddress } from "../../http/client-address";
import { publicBaseUrl } from "../../http/public-url";
import type { ChangeFeed } from "../../store/change-feed";
import { corsOf } from "../cors";
import { DocumentCache, renderText, whenReady, type RenderedDocument } from "../document-cache";
import { pickRendered, renderVariants, type RenderedVariants } from "../document-variants";
import { parseAssetId } from "../downloads/download-service";
import type { ClientRepository } from "../heartbeats/client-repository";
import type { ReleaseServices } from "../releases/release-services";
import { isPausedRollout, rolloutClientId } from "../releases/rollout";
import { DOCUMENT_CACHE_CONTROL, documentReply } from "../revalidation";
import type { Asset, Release } from "../types";
import { buildElectronYml, channelTakesPrereleases, electronFiles, parseElectronFeedName, type ElectronFeed } from "./electron/electron-feed";
import { planOffer, type OfferPlan } from "./offer";
import { countUpdateCheck, type UpdateCheckDeps } from "./update-check";

export type FeedRoutesDeps = UpdateCheckDeps & {
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  changes: Pick<ChangeFeed, "version">;
  releases: Pick<ReleaseServices, "offered" | "downloads" | "store">;
  /** A paused rollout is offered only to the clients of its group whose heartbeats report they run it (rollout.ts). */
  stores: { clients: Pick<ClientRepository, "reportedVersion"> };
};

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

/** Renders each offer of a plan with `build` (the release and the protocol's pick for it). */
function renderOffers<T>(plan: OfferPlan<T>, build: (r: Release, pick: T) => string, contentType: string): RenderedVariants {
  const picks = new Map<Release, T>([...(plan.base ? [plan.base] : []), ...plan.staged].map((o) => [o.release, o.pick]));
  return renderVariants(
    { base: plan.base?.release ?? null, staged: plan.staged.map((o) => o.release) },
    (r) => (r ? build(r, picks.get(r)!) : null),
    (body) => renderText(body as string | null, contentType),
  );
}

function electronDocuments(plan: OfferPlan<Asset[]>, baseUrl: string): ElectronDocuments {
  const variants = renderOffers(plan, (r, files) => buildElectronYml(r, files, baseUrl), YAML);
  // Without an id Gantry cannot place the client in a group: the newest staged release goes out with its share
  // as stagingPercentage, and electron-updater's own staging (from its id) decides.
  // A paused rollout takes nobody new, so it is not handed to the client's own rule.
  const newest = plan.staged.find((o) => !isPausedRollout(o.release));
  const anonymous = newest ? renderText(buildElectronYml(newest.release, newest.pick, baseUrl, newest.release.rolloutPercent ?? 100), YAML) : variants.base;
  return { variants, anonymous };
}

function notFound(request: Request, message: string, vary?: string): Response {
  const res = errorResponse(new AppError("not_found", message), { "cache-control": DOCUMENT_CACHE_CONTROL, ...corsOf(request) });
  if (vary) res.headers.append("vary", vary);
  return res;
}

export function feedRoutes(deps: FeedRoutesDeps) {
  const { offered, downloads, store } = deps.releases;
  const documents = new DocumentCache(() => deps.changes.version("releases"));
  const reportedVersion = (clientId: string) => deps.stores.clients.reportedVersion(clientId).catch(() => null);

  const electron = (request: Request, file: string): Response | Promise<Response> => {
    const feed: ElectronFeed | null = parseElectronFeedName(file);
    if (!feed) return notFound(request, `No feed '${file.slice(0, 64)}': electron-updater asks for latest.yml, latest-mac.yml, latest-linux.yml or latest-linux-arm64.yml (or another channel's).`);
    const baseUrl = publicBaseUrl(request, deps.config);
    const stagingId = rolloutClientId(request.headers.get(STAGING_ID_HEADER));
    if (stagingId !== null) countUpdateCheck(deps, null, { clientId: stagingId, platform: feed.platform, arch: feed.arch, runtime: "electron-updater" });
    const docs = documents.getValue(`electron\n${baseUrl}\n${file}`, async () =>
      electronDocuments(planOffer(await offered(), (r) => electronFiles(r, feed), { includePrerelease: channelTakesPrereleases(feed.channel) }), baseUrl),
    );
    return whenReady(docs, ({ variants, anonymous }) => {
      const vary = variants.staged.length > 0 ? STAGING_ID_HEADER : undefined;
      const reply = (doc: RenderedDocument) => (doc.empty ? notFound(request, "No release has a file for this feed yet.", vary) : documentReply(request, doc, vary));
      const doc = !vary ? variants.base : stagingId === null ? anonymous : pickRendered(variants, stagingId, reportedVersion);
      return doc instanceof Promise ? doc.then(reply) : reply(doc);
    });
  };

  return (
    new Elysia({ name: "site-updater-feeds" })
      .get("/update/electron/:file", ({ request, params }) => electron(request, params.file))
      /**
       * A feed's download address: a 302 to a `/dl/` link, as /api/v1/download/{assetId}. The name must be the
       * asset's, or the name of the blockmap published beside it (electron-updater asks for `URL.blockmap`).
       */
      .get("/update/files/:assetId/:name", async ({ request, params }) => {
        const asset = await store.getAsset(parseAssetId(params.assetId));
        const name = params.name;
        let target = asset && asset.name === name ? asset : null;
        if (asset && !target && name === `${asset.name}.blockmap`) target = await store.findAsset(asset.releaseId, name);
        if (!target) throw new AppError("not_found", "No such file.", { param: "name" });
        const token = await downloads.issue(String(target.id), clientAddress(request));
        return new Response(null, {
          status: 302,
          headers: { location: `${publicBaseUrl(request, deps.config)}/dl/${token}`, "cache-control": "no-store", ...corsOf(request) },
        });
      })
  );
}
