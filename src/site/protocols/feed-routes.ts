/**
 * The updater feeds' routes (thin: validate, delegate to each protocol's handler): electron-updater's
 * `/update/electron/{file}`, Tauri's `/update/tauri/…`, Squirrel.Mac's `/update/squirrel-mac/{arch}/{version}`, Squirrel.Windows' `/update/squirrel-windows/{arch}/RELEASES`, Sparkle's `/update/sparkle/appcast.xml`, Velopack's `/update/velopack/releases.{channel}.json`, and the download addresses every feed gives,
 * `/update/files/{assetId}/{name}`. Feeds are rendered once per release generation (shared/feed-context.ts) per base URL
 * and feed, one variant per staged rollout; a request only picks one by its client id.
 */
import { Elysia } from "elysia";
import { AppError } from "../../errors";
import { clientAddress } from "../../http/client-address";
import { publicBaseUrl } from "../../http/public-url";
import { corsOf } from "../http/cors";
import { parseAssetId } from "../downloads/download-service";
import { readParam } from "../http/rules/query-params";
import { electronHandler } from "./electron/electron-handler";
import { feedContext, type FeedDeps } from "./shared/feed-context";
import { sparkleHandler } from "./sparkle/sparkle-handler";
import { squirrelHandlers } from "./squirrel/squirrel-handler";
import { tauriHandlers } from "./tauri/tauri-handler";
import { velopackHandler } from "./velopack/velopack-handler";

export type FeedRoutesDeps = FeedDeps;

export function feedRoutes(deps: FeedRoutesDeps) {
  const ctx = feedContext(deps);
  const electron = electronHandler(ctx);
  const tauri = tauriHandlers(ctx);
  const squirrel = squirrelHandlers(ctx);
  const sparkle = sparkleHandler(ctx);
  const velopack = velopackHandler(ctx);
  const { downloads, store } = deps.releases;
  return (
    new Elysia({ name: "site-updater-feeds" })
      .get("/update/electron/:file", ({ request, params }) => electron(request, params.file))
      .get("/update/tauri/latest.json", ({ request }) => tauri.static(request))
      .get("/update/tauri/:target/:arch/:current_version", ({ request, params, query }) =>
        tauri.dynamic(request, params.target, params.arch, params.current_version, readParam(query as Record<string, unknown>, "bundle_type") || undefined),
      )
      .get("/update/squirrel-mac/:arch/:version", ({ request, params }) => squirrel.mac(request, params.arch, params.version))
      .get("/update/velopack/:file", ({ request, params, query }) => velopack(request, params.file, query as Record<string, unknown>))
      .get("/update/sparkle/appcast.xml", ({ request, query }) => sparkle(request, query as Record<string, unknown>))
      .get("/update/squirrel-windows/:arch/RELEASES", ({ request, params, query }) => squirrel.windows(request, params.arch, query as Record<string, unknown>))
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
