/**
 * The choice of an account for one attempt (pure). Among the accounts that serve the model and were not tried yet
 * in this call: the best (lowest) priority tier that has a usable one; within it, an account due for its probe
 * first (it comes back only through one), else the sticky preference when it is usable, else a weighted pick that
 * favours the less busy (weight / (1 + in flight)). Weight 0 drains an account: it is picked only when nothing else
 * in its tier is usable. When nothing is usable, `out` says why and when the soonest comes back.
 */
import type { FailureKind, PoolAccount, PoolHealth } from "./account-types";

export type Availability =
  | { state: "usable" }
  /** Out until a probe succeeds, and the probe is due: one call may try it. */
  | { state: "probe" }
  | { state: "out"; untilMs: number | null; why: FailureKind | "busy" | "manual" };

export function servesModel(account: PoolAccount, model: string): boolean {
  return account.models.includes("*") || account.models.includes(model) || Object.hasOwn(account.modelMap, model);
}

/** The model id this account is asked for. */
export function upstreamModelOf(account: PoolAccount, model: string): string {
  return Object.hasOwn(account.modelMap, model) ? account.modelMap[model]! : model;
}

export function availabilityOf(account: PoolAccount, health: PoolHealth | undefined, model: string, nowMs: number): Availability {
  if (!health) return { state: "usable" };
  const why = (health.reason ?? "server_error") as FailureKind;
  const cooling = Math.max(health.coolingUntil ?? 0, health.modelCoolingUntil[model] ?? 0);
  if (health.disabled) {
    if (health.disabled.manual) return { state: "out", untilMs: null, why: "manual" };
    if (cooling > nowMs || health.probing) return { state: "out", untilMs: cooling > nowMs ? cooling : nowMs + 1000, why };
    return { state: "probe" };
  }
  if (cooling > nowMs) return { state: "out", untilMs: cooling, why };
  if (account.maxConcurrency !== null && health.inFlight >= account.maxConcurrency) return { state: "out", untilMs: nowMs + 1000, why: "busy" };
  return { state: "usable" };
}

export interface ChoiceInput<A extends PoolAccount> {
  accounts: readonly A[];
  health: ReadonlyMap<string, PoolHealth>;
  model: string;
  nowMs: number;
  /** Accounts already tried in this call (each is tried at most once). */
  tried: ReadonlySet<string>;
  /** The account a continued response came from: taken when usable, whatever its tier. */
  pinned?: string | null;
  /** A stable key (the prompt_cache_key, else the API key's id): the same key prefers the same account of the tier. */
  affinity?: string | null;
  /** A number in [0, 1) for the weighted pick. */
  random: number;
}

/** An account that cannot take the call now: until when (null: until an operator or a probe says so), and why. */
export interface OutAccount {
  name: string;
  untilMs: number | null;
  why: FailureKind | "busy" | "manual";
}

export type Choice<A extends PoolAccount> = { account: A; probe: boolean } | { account: null; out: OutAccount[] };

export function chooseAccount<A extends PoolAccount>(input: ChoiceInput<A>): Choice<A> {
  const { accounts, health, model, nowMs, tried } = input;
  const usable: Array<{ account: A; probe: boolean; inFlight: number }> = [];
  const out: OutAccount[] = [];
  for (const account of accounts) {
    if (tried.has(account.name) || !servesModel(account, model)) continue;
    const h = health.get(account.name);
    const a = availabilityOf(account, h, model, nowMs);
    if (a.state === "out") out.push({ name: account.name, untilMs: a.untilMs, why: a.why });
    else usable.push({ account, probe: a.state === "probe", inFlight: h?.inFlight ?? 0 });
  }
  if (usable.length === 0) return { account: null, out };
  if (input.pinned) {
    const p = usable.find((u) => u.account.name === input.pinned && !u.probe);
    if (p) return { account: p.account, probe: false };
  }
  const best = Math.min(...usable.map((u) => u.account.priority));
  const tier = usable.filter((u) => u.account.priority === best);
  const probe = tier.find((u) => u.probe);
  if (probe) return { account: probe.account, probe: true };
  const weighted = tier.filter((u) => u.account.weight > 0);
  if (weighted.length === 0) {
    // Drained accounts only: the least busy.
    const least = tier.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    return { account: least.account, probe: false };
  }
  if (input.affinity) return { account: rendezvous(weighted.map((u) => u.account), input.affinity), probe: false };
  const shares = weighted.map((u) => u.account.weight / (1 + u.inFlight));
  let r = input.random * shares.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weighted.length; i++) {
    r -= shares[i]!;
    if (r < 0) return { account: weighted[i]!.account, probe: false };
  }
  return { account: weighted[weighted.length - 1]!.account, probe: false };
}

/**
 * Whether chooseAccount would find an account (another could take over if the one tried fails): the same test of
 * each account, without building the choice (it runs on every attempt of a pool of several).
 */
export function anyUsable(input: Omit<ChoiceInput<PoolAccount>, "random" | "pinned" | "affinity">): boolean {
  const { accounts, health, model, nowMs, tried } = input;
  for (const account of accounts) {
    if (tried.has(account.name) || !servesModel(account, model)) continue;
    if (availabilityOf(account, health.get(account.name), model, nowMs).state !== "out") return true;
  }
  return false;
}

/**
 * Weighted rendezvous hashing: each (key, account) pair gets a score from a hash, scaled by the account's weight;
 * the highest wins. The same key keeps its account while that account is usable, and when one leaves, only its keys
 * move.
 */
export function rendezvous<A extends PoolAccount>(accounts: readonly A[], key: string): A {
  let best = accounts[0]!;
  let bestScore = -Infinity;
  for (const a of accounts) {
    // A uniform number in (0, 1) from the hash; -weight / ln(u) is the weighted form of "highest hash wins".
    const u = (fnv1a(`${key}\u0000${a.name}`) + 0.5) / 4294967296;
    const score = -a.weight / Math.log(u);
    if (score > bestScore) (best = a), (bestScore = score);
  }
  return best;
}

/**
 * FNV-1a, 32 bits, with MurmurHash3's finaliser (FNV alone barely mixes its last characters, and the keys hashed
 * differ only there): a stable, fast hash of a string, with no security role.
 */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Every account that serves the model is out: 429 when each is out for a rate limit (or at its concurrency cap),
 * waiting helps; else 503. Retry-After is the soonest any of them comes back (at least one second).
 */
export function allOutReply(out: readonly OutAccount[], nowMs: number): { status: 429 | 503; retryAfterSeconds: number } {
  const rateLimited = out.length > 0 && out.every((o) => o.why === "rate_limited" || o.why === "busy");
  const times = out.map((o) => o.untilMs).filter((t): t is number => t !== null);
  const soonest = times.length ? Math.min(...times) : nowMs + 30_000;
  return { status: rateLimited ? 429 : 503, retryAfterSeconds: Math.max(1, Math.ceil((soonest - nowMs) / 1000)) };
}
