/**
 * Documents that differ by client during a staged rollout: `base` for everyone, one rendered document per release in
 * a staged rollout, and the rule that picks one for a client id (rollout.ts). Rendered once per release generation
 * (document-cache.ts); with no rollout in progress (`staged` empty) no client is looked at. Shared by /api/v1/latest,
 * the legacy manifest and the updater feeds, so every protocol offers a client the same release.
 */
import { renderDocument, type RenderedDocument } from "../http/document-cache";
import { documentReply } from "../http/revalidation";
import { inRolloutGroup, isPausedRollout, rolloutOffers, type RolloutState } from "./rules/rollout";

export interface RenderedVariants {
  base: RenderedDocument;
  staged: Array<{ release: RolloutState; doc: RenderedDocument }>;
}

/** Each variant rendered by `render` (JSON by default; a feed passes its own format). */
export function renderVariants<R extends RolloutState>(
  plan: { base: R | null; staged: R[] },
  build: (r: R | null) => unknown,
  render: (value: unknown) => RenderedDocument = renderDocument,
): RenderedVariants {
  return {
    base: render(build(plan.base)),
    staged: plan.staged.map((release) => ({ release, doc: render(build(release)) })),
  };
}

/** Asks the version a client's last heartbeat reported (null when unknown, or when the store fails). */
export type ReportedVersion = (clientId: string) => Promise<string | null>;

/**
 * The variant this client gets. Only a client in the group of a paused rollout needs its reported version, so
 * only then is the store asked (one lookup); everyone else is answered without a promise.
 */
export function pickRendered(v: RenderedVariants, clientId: string | null, reportedVersion: ReportedVersion): RenderedDocument | Promise<RenderedDocument> {
  if (clientId === null) return v.base;
  for (const s of v.staged) {
    if (!inRolloutGroup(s.release, clientId)) continue;
    if (!isPausedRollout(s.release)) return s.doc;
    return reportedVersion(clientId).then((reported) => pickWithReport(v, clientId, reported));
  }
  return v.base;
}

function pickWithReport(v: RenderedVariants, clientId: string, reported: string | null): RenderedDocument {
  for (const s of v.staged) if (rolloutOffers(s.release, clientId, reported)) return s.doc;
  return v.base;
}

/**
 * The document for this client, revalidated against its own ETag (each variant is a different body, so a
 * different tag). While a rollout is in progress the reply varies with `varyHeader`, the header the id came from.
 */
export function variantReply(request: Request, v: RenderedVariants, clientId: () => string | null, varyHeader: string, reportedVersion: ReportedVersion): Response | Promise<Response> {
  if (v.staged.length === 0) return documentReply(request, v.base);
  const chosen = pickRendered(v, clientId(), reportedVersion);
  if (chosen instanceof Promise) return chosen.then((doc) => documentReply(request, doc, varyHeader));
  return documentReply(request, chosen, varyHeader);
}
