/**
 * Staged rollouts (pure): which clients a release in a staged rollout is offered to. A client id falls in a
 * bucket of a stable hash of (version, id), 0..9999; a release at P percent is offered to the ids whose
 * bucket is below P × 100. The bucket never changes, so raising P keeps every id that was in, and each
 * release draws its own group (the same 10% of ids are not always the first ones to get every release).
 *
 * A paused rollout takes nobody new: of its group, it is offered only to the clients that already run it, as
 * their heartbeats report (the version of a client's last heartbeat, in any spelling). Without that, every id
 * of the group that asked for the first time during the pause would still be handed the release.
 *
 * The bucket is a function of the id, and clients choose their ids: a client can try ids until one lands in a
 * group. That is inherent to id-based rollouts; they spread a release, they do not keep it from anyone.
 */
import { compareVersions, isValidVersion, normalizeVersion } from "./versions";

/** Buckets per 100%: a percentage is honoured to two decimals of its share of ids. */
export const ROLLOUT_BUCKETS = 10_000;

/** A client id as /api/v1/latest reads it: visible ASCII, 1-128 characters (the heartbeat's rule). */
const CLIENT_ID_RE = /^[!-~]{1,128}$/;

/** The id if it is well formed, else null (a malformed id is treated as no id: the fully rolled-out release). */
export function rolloutClientId(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const id = raw.trim();
  return CLIENT_ID_RE.test(id) ? id : null;
}

/** The client's bucket for this release: 0..ROLLOUT_BUCKETS-1, the same for every spelling of the version. */
export function rolloutBucket(clientId: string, version: string): number {
  const digest = new Bun.CryptoHasher("sha256").update(`${normalizeVersion(version)}\n${clientId}`).digest();
  const u32 = ((digest[0] << 24) >>> 0) + (digest[1] << 16) + (digest[2] << 8) + digest[3];
  return Math.floor((u32 * ROLLOUT_BUCKETS) / 0x1_0000_0000);
}

/** A rollout percentage as stored: an integer 0..100 (100 = everyone). */
export function isRolloutPercent(p: unknown): p is number {
  return typeof p === "number" && Number.isInteger(p) && p >= 0 && p <= 100;
}

export interface RolloutState {
  version: string;
  /** 0..100; absent = 100. */
  rolloutPercent?: number;
  /** The rollout is paused: its group takes nobody new. */
  rolloutPaused?: boolean;
  yanked?: boolean;
}

/** The release is fully rolled out (offered to every client, id or not) and not yanked. */
export function isFullyRolledOut(r: RolloutState): boolean {
  return !r.yanked && (r.rolloutPercent ?? 100) >= 100;
}

/** Whether this client is in the release's group (null = no id: only fully rolled-out releases), paused or not. */
export function inRolloutGroup(r: RolloutState, clientId: string | null): boolean {
  if (r.yanked) return false;
  const p = r.rolloutPercent ?? 100;
  if (p >= 100) return true;
  if (clientId === null || p <= 0) return false;
  return rolloutBucket(clientId, r.version) < p * (ROLLOUT_BUCKETS / 100);
}

/** A staged rollout that is paused (one offered to everyone has nothing to pause). */
export function isPausedRollout(r: RolloutState): boolean {
  return r.rolloutPaused === true && !r.yanked && (r.rolloutPercent ?? 100) < 100;
}

/** The client's reported version (its last heartbeat's, null when none) is this release's, in any spelling. */
export function runsRelease(reported: string | null, version: string): boolean {
  return reported !== null && isValidVersion(reported) && compareVersions(reported, version) === 0;
}

/**
 * Whether the release is offered to this client: in its group, and, while the rollout is paused, already running
 * it (`reported`: the version of the client's last heartbeat, null when unknown).
 */
export function rolloutOffers(r: RolloutState, clientId: string | null, reported: string | null = null): boolean {
  return inRolloutGroup(r, clientId) && (!isPausedRollout(r) || runsRelease(reported, r.version));
}
