/**
 * A lease kept in the meta table (`lease:<name>` → `{owner, until}`), for every backend: what a held value means.
 * The backends keep their own SQL and their own way of making the check and the take one step.
 */
import { makerOf } from "../../state/process-owner";

export const leaseKey = (name: string) => `lease:${name}`;

/**
 * Whether the lease `value` (as stored, possibly corrupt) keeps `owner` from taking it at `now`: held by another
 * owner, not expired, and not by a process of this host that no longer runs (killed mid-sync: it cannot renew it,
 * so there is no need to wait for the expiry). A corrupt lease is treated as free.
 */
export function leaseHeldByOther(value: string, owner: string, now: number): boolean {
  let held: { owner?: string; until?: number } = {};
  try {
    held = JSON.parse(value);
  } catch {
    return false;
  }
  return Boolean(held.owner && held.owner !== owner && typeof held.until === "number" && held.until > now && makerOf(held.owner) !== "dead");
}
