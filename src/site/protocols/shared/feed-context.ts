/**
 * What the updater feeds' handlers share: their dependencies, the document cache of the feeds (rendered once per
 * release generation), the client's reported version for paused rollouts, the rendering of an offer plan's
 * variants, and the 404 a feed answers when there is nothing to offer. It sits in shared/ (with update-check and
 * version-check) rather than at the root of protocols/: the root's feed-routes composes every protocol's folder, so
 * what those folders use must live below it, or protocols/ and each of them would import each other.
 */
import type { Config } from "../../../config";
import { AppError, errorResponse } from "../../../errors";
import type { ChangeFeed } from "../../../state/change-feed";
import { corsOf } from "../../http/cors";
import { DocumentCache, type RenderedDocument } from "../../http/document-cache";
import { renderVariants, type RenderedVariants, type ReportedVersion } from "../../releases/document-variants";
import type { ClientRepository } from "../../heartbeats/client-repository";
import type { ReleaseServices } from "../../releases/release-services";
import { DOCUMENT_CACHE_CONTROL } from "../../http/revalidation";
import type { Release } from "../../releases/release-repository";
import type { OfferPlan } from "../rules/offer";
import type { UpdateCheckDeps } from "./update-check";

export type FeedDeps = UpdateCheckDeps & {
  config: Pick<Config, "publicUrl" | "trustedProxies">;
  changes: Pick<ChangeFeed, "version">;
  releases: Pick<ReleaseServices, "offered" | "downloads" | "store">;
  /** A paused rollout is offered only to the clients of its group whose heartbeats report they run it (rollout.ts). */
  stores: { clients: Pick<ClientRepository, "reportedVersion"> };
};

export interface FeedContext {
  deps: FeedDeps;
  documents: DocumentCache;
  reportedVersion: ReportedVersion;
}

export function feedContext(deps: FeedDeps): FeedContext {
  return {
    deps,
    documents: new DocumentCache(() => deps.changes.version("releases")),
    reportedVersion: (clientId) => deps.stores.clients.reportedVersion(clientId).catch(() => null),
  };
}

/** Renders each offer of a plan with `build` (the release and the protocol's pick for it). */
export function renderOffers<T>(plan: OfferPlan<T>, build: (r: Release, pick: T) => unknown, render: (value: unknown) => RenderedDocument): RenderedVariants {
  const picks = new Map<Release, T>([...(plan.base ? [plan.base] : []), ...plan.staged].map((o) => [o.release, o.pick]));
  return renderVariants({ base: plan.base?.release ?? null, staged: plan.staged.map((o) => o.release) }, (r) => (r ? build(r, picks.get(r)!) : null), render);
}

export function feedNotFound(request: Request, message: string, vary?: string): Response {
  const res = errorResponse(new AppError("not_found", message), { "cache-control": DOCUMENT_CACHE_CONTROL, ...corsOf(request) });
  if (vary) res.headers.append("vary", vary);
  return res;
}
