/**
 * The one rule by which every updater protocol decides what a client is offered (pure). It is /api/v1/latest's
 * rule (latest.ts `planOver` and `chooseVariant`), not a copy: the releases ranked newest first (pre-releases only
 * when the channel takes them, unparsable versions never), yanked releases never, the newest release offered to
 * everyone as the base, the newer ones in a staged rollout offered to the client ids in their group. A protocol
 * only says what it can offer of a release (`pick`: its file for this platform and arch, with the digests or
 * signature it needs, or null); a release it cannot offer anything of is passed over for the previous one.
 * The releases come from ReleaseServices.offered, so the signature gating of signed-offer.ts holds as well.
 */
import { chooseVariant, planOver, rankReleases } from "../../releases/rules/latest";
import type { Release } from "../../releases/release-repository";

export interface Offer<T> {
  release: Release;
  /** What the protocol offers of the release (its files). */
  pick: T;
}

/** `base` for every client; `staged` (newest first) for the ids in each rollout's group. */
export interface OfferPlan<T> {
  base: Offer<T> | null;
  staged: Array<Offer<T>>;
}

export function planOffer<T>(releases: readonly Release[], pick: (r: Release) => T | null, opts: { includePrerelease?: boolean } = {}): OfferPlan<T> {
  const picks = new Map<Release, T>();
  const plan = planOver(rankReleases(releases, opts), (r) => {
    const p = pick(r);
    if (p === null) return false;
    picks.set(r, p);
    return true;
  });
  const offer = (r: Release): Offer<T> => ({ release: r, pick: picks.get(r)! });
  return { base: plan.base ? offer(plan.base) : null, staged: plan.staged.map(offer) };
}

/**
 * The offer for this client id (null: no id, then only the base). `reported`, the version the client runs (its
 * last heartbeat's, or the one the protocol sends), decides a paused rollout's group (rollout.ts).
 */
export function chooseOffer<T>(plan: OfferPlan<T>, clientId: string | null, reported: string | null = null): Offer<T> | null {
  const release = chooseVariant({ base: plan.base?.release ?? null, staged: plan.staged.map((o) => o.release) }, clientId, reported);
  if (release === null) return null;
  return plan.base?.release === release ? plan.base : plan.staged.find((o) => o.release === release)!;
}
