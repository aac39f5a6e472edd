/**
 * Admission: the key checks in the spec's order — status, validity, model permission, quota, RPM, RPD,
 * concurrency — plus the max-tokens bound (checked right after model permission: it is a property of the
 * request, so it is decided before any budget is looked at). All pass or nothing is consumed.
 * The result is a Lease that must be released exactly once, in `finally`.
 */
import { AppError } from "../../errors";
import { bearerToken } from "../../http/bearer";
import type { CachedKey, KeyCache } from "../keys/key-cache";
import type { LimiterStore, RequestBudget, Reservation } from "./limiter";
import { costOf, estimateTokens, type Prices } from "./rules/quota";

export interface AdmissionRequest {
  /** null for the model list, which checks rates only. */
  model: string | null;
  /** The model the upstream will run, whose prices the reservation is estimated with (an alias's target); default `model`. */
  pricedAs?: string;
  maxTokens: number | null;
  maxTokensParam?: string;
  bodyBytes: number;
}

export interface Lease {
  key: CachedKey;
  reservation: Reservation;
  headers: Record<string, string>;
  /** Ends the request with the usage it really had (tokens and cost); once, whatever ends it. */
  settle(used: Reservation): void;
}

export interface AdmissionDeps {
  keys: KeyCache;
  limiter: LimiterStore;
  priceOf: (model: string) => Prices | null;
  now: () => number;
}

/** Go-style duration text, as OpenAI's x-ratelimit-reset-* headers use: `12ms`, `1s`, `1.5s`, `6m0s`, `1h2m3s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  let rest = ms / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  const s = Number(rest.toFixed(3)).toString();
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

export function rateLimitHeaders(budget: RequestBudget | null): Record<string, string> {
  // No header rather than a wrong one: a client must never read NaN or Infinity here.
  if (!budget || ![budget.limit, budget.remaining, budget.resetMs].every(Number.isFinite)) return {};
  return {
    "x-ratelimit-limit-requests": String(budget.limit),
    "x-ratelimit-remaining-requests": String(budget.remaining),
    "x-ratelimit-reset-requests": formatDuration(budget.resetMs),
  };
}

const LIMIT_MESSAGES = {
  quota_exceeded: "This API key's quota is used up.",
  rate_limit_rpm: "Rate limit reached: too many requests per minute for this API key.",
  rate_limit_rpd: "Rate limit reached: too many requests per day for this API key.",
  concurrent_limit: "Too many concurrent requests for this API key.",
} as const;

/**
 * Resolves the bearer key: missing_api_key or invalid_api_key. Runs before the body is read, so an
 * unauthenticated caller learns nothing about its request and costs us no body parsing.
 */
export function authenticate(deps: AdmissionDeps, authorization: string | null): CachedKey {
  const secret = bearerToken(authorization);
  if (!secret) {
    throw new AppError(
      "missing_api_key",
      authorization
        ? "The Authorization header must be of the form 'Bearer <API key>'."
        : "You didn't provide an API key. Send it in the Authorization header as 'Bearer <API key>'.",
    );
  }
  const cached = deps.keys.lookup(secret);
  if (!cached) throw new AppError("invalid_api_key", "Incorrect API key provided.");
  return cached;
}

/** Runs the checks for an authenticated key; throws the AppError of the first check that fails. */
export async function admit(deps: AdmissionDeps, cached: CachedKey, req: AdmissionRequest): Promise<Lease> {
  const key = cached.key;
  const now = deps.now();

  if (key.status !== "active") throw new AppError("api_key_disabled", "This API key is disabled.");
  if (key.notBefore !== null && now < key.notBefore) {
    throw new AppError("api_key_not_yet_valid", `This API key is valid from ${new Date(key.notBefore).toISOString()}.`);
  }
  if (key.expiresAt !== null && now >= key.expiresAt) {
    throw new AppError("api_key_expired", `This API key expired at ${new Date(key.expiresAt).toISOString()}.`);
  }
  if (req.model !== null && !cached.allowsModel(req.model)) {
    throw new AppError("model_not_allowed", `This API key may not use the model '${req.model}'.`, { param: "model" });
  }
  if (req.model !== null && key.maxTokens !== null && req.maxTokens !== null && req.maxTokens > key.maxTokens) {
    throw new AppError(
      "max_tokens_exceeded",
      `${req.maxTokensParam ?? "max_tokens"} is ${req.maxTokens}, above this API key's limit of ${key.maxTokens}.`,
      { param: req.maxTokensParam ?? "max_tokens" },
    );
  }

  const generating = req.model !== null;
  const estimate = estimateTokens(req.bodyBytes, req.maxTokens ?? key.maxTokens);
  const reservation: Reservation = generating
    ? {
        tokens: estimate.input + estimate.output,
        cost: costOf(deps.priceOf(req.pricedAs ?? req.model!), estimate.input, estimate.output),
      }
    : { tokens: 0, cost: 0 };
  const result = await deps.limiter.admit(
    key.id,
    key,
    { tokens: cached.usage.tokens, spent: cached.usage.spent, since: cached.usage.resetAt },
    reservation,
    now,
    { concurrency: generating, quota: generating },
  );
  const headers = rateLimitHeaders(result.budget);
  if (!result.ok) {
    const wait = Math.ceil(result.retryAfterMs / 1000);
    const finite = Number.isFinite(wait);
    const retryAfter = result.code === "quota_exceeded" || !finite ? 3600 : Math.max(1, wait);
    const errHeaders: Record<string, string> = { ...headers, "retry-after": String(retryAfter) };
    // SDKs retry 429s on their own; a wait they cannot usefully make is better not retried at all.
    if (result.code === "quota_exceeded" || !result.retryable || !finite || retryAfter > 60) errHeaders["x-should-retry"] = "false";
    throw new AppError(result.code, LIMIT_MESSAGES[result.code], { headers: errHeaders });
  }

  let released = false;
  const slot = result.slot;
  return {
    key: cached,
    reservation,
    headers,
    settle(used) {
      if (released || !generating) return;
      released = true;
      deps.limiter.settle(key.id, reservation, used, slot);
    },
  };
}
