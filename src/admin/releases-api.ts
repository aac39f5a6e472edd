/**
 * /admin/api/releases: the release operations of `gantry releases`, as JSON, behind the admin token
 * (checked globally for /admin/api/*).
 *
 *   GET    /                                  releases, newest version first, each with `onlineClients` (heartbeats)
 *   POST   /                                  create {version, notes?, minAppVersion?, prerelease?, publishedAt?, rolloutPercent?, assets?: [{name, url}]}
 *   GET    /sync                              last sync report, whether one is running, the configured source
 *   POST   /sync                              run a sync now {github?, apiUrl?, token?, prereleases?} (default: the settings)
 *   GET    /:version                          one release
 *   PATCH  /:version                          {notes?, minAppVersion?, prerelease?, publishedAt?, rolloutPercent?}
 *   POST   /:version/rollout                  {percent}: staged rollout to that share of client ids (409 while paused)
 *   POST   /:version/pause | /resume          freeze a staged rollout's percentage / let it change again
 *   POST   /:version/yank | /unyank           withdraw the release from every document / put it back
 *   DELETE /:version
 *   PUT    /:version/assets/:name             upload the raw request body as that asset (streamed into the mirror)
 *   POST   /:version/assets                   {name, url}: an asset known by its upstream address ("" = unavailable)
 *   PATCH  /:version/assets/:asset            operator classification {platform?, arch?, fileType?} (asset id or name)
 *   DELETE /:version/assets/:asset
 *   GET    /:version/assets/:asset/downloads  downloads per UTC day
 */
import { holdConnection, releaseConnection } from "../http/connection-hold";
import { Elysia, t } from "elysia";
import type { Config } from "../config";
import type { ReleaseServices } from "../site/releases/release-services";
import { AppError } from "../errors";
import { checkAssetName, checkUpstreamUrl } from "../site/releases/release-catalog";
import { assetView, releaseView, sortNewestFirst, withOnlineClients } from "../site/releases/release-view";
import type { ClientStatsService } from "../site/heartbeats/client-stats-service";
import { configuredTokenFor } from "../site/releases/sync-github";
import { MirrorWriteError } from "../site/releases/mirror";
import { boundedJsonParser } from "../http/body";
import { redactUrlCredentials } from "../redact";

const Meta = {
  notes: t.Optional(t.String({ maxLength: 100_000 })),
  minAppVersion: t.Optional(t.String({ maxLength: 256 })),
  prerelease: t.Optional(t.Boolean()),
  publishedAt: t.Optional(t.String({ maxLength: 64 })),
  rolloutPercent: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
};
const RolloutInput = t.Object({ percent: t.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false });

const UrlAsset = t.Object({ name: t.String({ minLength: 1, maxLength: 255 }), url: t.String({ maxLength: 4096 }) }, { additionalProperties: false });

const CreateInput = t.Object(
  { version: t.String({ minLength: 1, maxLength: 256 }), ...Meta, assets: t.Optional(t.Array(UrlAsset, { maxItems: 500 })) },
  { additionalProperties: false },
);
const UpdateInput = t.Object(Meta, { additionalProperties: false });
const ClassifyInput = t.Object(
  {
    platform: t.Optional(t.String({ maxLength: 32 })),
    arch: t.Optional(t.String({ maxLength: 32 })),
    fileType: t.Optional(t.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);
/**
 * Every JSON body here is read by our parser (bounded, nesting checked) before Elysia validates it: 500 assets of
 * the largest name and URL and the longest notes stay under 3 MiB.
 */
const parse = boundedJsonParser(4 * 1024 * 1024);

const SyncInput = t.Object(
  {
    github: t.Optional(t.String({ maxLength: 201 })),
    apiUrl: t.Optional(t.String({ maxLength: 2048 })),
    token: t.Optional(t.String({ maxLength: 1024 })),
    prereleases: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);

/**
 * An upload that did not arrive whole is the request's doing, not a server fault: a body the mirror refuses (not the
 * declared size) is a 400, and one cut off because the caller went away is logged as 499, as the gateway logs a caller
 * that leaves. (The mirror has already removed its temporary file.) Anything else stays a server error.
 */
function uploadFailure(err: unknown, signal: AbortSignal): unknown {
  if (err instanceof AppError) return err;
  if (err instanceof MirrorWriteError) return new AppError("invalid_request", `The upload was refused: ${err.message}.`);
  if (signal.aborted) return new AppError("invalid_request", "The upload ended before the whole body arrived: the client went away.", { status: 499 });
  return err;
}

export interface ReleasesApiDeps {
  config: Pick<Config, "syncIntervalMinutes">;
  releases: Pick<ReleaseServices, "catalog" | "store" | "sync" | "downloads" | "configuredSync">;
  /** The online clients' versions (from heartbeats), counted per release in the list. */
  engagement: { stats: Pick<ClientStatsService, "clients"> };
}

export function releasesApi(deps: ReleasesApiDeps) {
  const { catalog, store, sync } = deps.releases;
  const view = async (version: string) => releaseView(await catalog.find(version));

  return new Elysia({ name: "admin-releases", prefix: "/admin/api/releases" })
    // Authenticated by the guard already: a sync, a mirrored URL asset or an upload may take minutes.
    .onBeforeHandle(({ request }) => holdConnection(request))
    .onAfterResponse(({ request }) => releaseConnection(request))
    .get("/", async () => {
      const [releases, clients] = await Promise.all([store.list(), deps.engagement.stats.clients()]);
      return { object: "list", data: withOnlineClients(sortNewestFirst(releases).map(releaseView), clients.byVersion) };
    })
    .post(
      "/",
      async ({ body, set }) => {
        const { assets = [], version, ...meta } = body;
        // Every asset is checked before the release exists, so a bad one leaves nothing half-made.
        for (const a of assets) checkAssetName(a.name), checkUpstreamUrl(a.url);
        const release = await catalog.create(version, meta, true);
        for (const a of assets) await catalog.addUrlAsset(release.version, a.name, a.url);
        set.status = 201;
        return view(release.version);
      },
      { body: CreateInput, parse },
    )
    .get("/sync", async () => {
      const configured = deps.releases.configuredSync();
      return {
        running: sync.isRunning,
        configured: configured
          ? { github: configured.repo, apiUrl: configured.apiUrl && redactUrlCredentials(configured.apiUrl), prereleases: configured.prereleases, intervalMinutes: deps.config.syncIntervalMinutes }
          : null,
        last: await sync.lastReport(),
      };
    })
    .post(
      "/sync",
      async ({ body }) => {
        const configured = deps.releases.configuredSync();
        const repo = body?.github ?? configured?.repo;
        if (!repo) throw new AppError("invalid_request", "No repository: pass 'github' (OWNER/REPO) or set GANTRY_SYNC_GITHUB.", { param: "github" });
        const apiUrl = body?.apiUrl ?? configured?.apiUrl;
        return sync.run({
          repo,
          apiUrl,
          // The configured token goes to the configured API only, never to an address named in the request.
          token: body?.token ?? (configured ? configuredTokenFor(body?.apiUrl, configured) : undefined),
          prereleases: body?.prereleases ?? configured?.prereleases ?? false,
        });
      },
      { body: t.Optional(SyncInput), parse },
    )
    .get("/:version", ({ params }) => view(params.version))
    .patch("/:version", async ({ params, body }) => releaseView(await catalog.update(params.version, body)), { body: UpdateInput, parse })
    .post("/:version/rollout", async ({ params, body }) => releaseView(await catalog.rollout(params.version, body.percent)), { body: RolloutInput, parse })
    .post("/:version/pause", async ({ params }) => releaseView(await catalog.pause(params.version)))
    .post("/:version/resume", async ({ params }) => releaseView(await catalog.resume(params.version)))
    .post("/:version/yank", async ({ params }) => releaseView(await catalog.yank(params.version)))
    .post("/:version/unyank", async ({ params }) => releaseView(await catalog.yank(params.version, false)))
    .delete("/:version", async ({ params, set }) => {
      await catalog.delete(params.version);
      set.status = 204;
      return null;
    })
    .put(
      "/:version/assets/:name",
      async ({ params, request, set }) => {
        if (!request.body) throw new AppError("invalid_request", "The request body (the file's bytes) is empty.");
        const declared = request.headers.get("content-length");
        const expected = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
        const asset = await catalog.upload(params.version, params.name, request.body, expected).catch((err) => {
          throw uploadFailure(err, request.signal);
        });
        set.status = 201;
        return assetView(asset);
      },
      // The body is the file itself, streamed to the mirror: no parsing, no buffering.
      { parse: "none" },
    )
    .post(
      "/:version/assets",
      async ({ params, body, set }) => {
        const asset = await catalog.addUrlAsset(params.version, body.name, body.url);
        set.status = 201;
        return assetView(asset);
      },
      { body: UrlAsset, parse },
    )
    .patch("/:version/assets/:asset", async ({ params, body }) => assetView(await catalog.classify(params.version, params.asset, body)), {
      body: ClassifyInput,
      parse,
    })
    .delete("/:version/assets/:asset", async ({ params, set }) => {
      await catalog.deleteAsset(params.version, params.asset);
      set.status = 204;
      return null;
    })
    .get("/:version/assets/:asset/downloads", async ({ params }) => {
      const asset = catalog.findAsset(await catalog.find(params.version), params.asset);
      return { asset: assetView(asset), daily: await deps.releases.downloads.downloadsByDay(asset.id) };
    });
}
