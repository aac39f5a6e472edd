/**
 * The pool as the settings describe it: the accounts (`[[upstreams]]`, or GANTRY_UPSTREAM_URL/_KEY as one account
 * named `default`), a client per account, and the no-op events used until something observes them.
 */
import type { Config } from "../../config";
import type { PoolEvents, UpstreamAccount } from "./pool-port";
import { Upstream } from "./upstream";

export function accountsOf(config: Pick<Config, "upstreams" | "upstreamUrl" | "upstreamKey">): UpstreamAccount[] {
  if (config.upstreams.length > 0) {
    return config.upstreams.map((a) => ({
      name: a.name,
      baseUrl: a.url,
      apiKey: a.apiKey,
      models: a.models,
      modelMap: a.modelMap,
      priority: a.priority,
      weight: a.weight,
      maxConcurrency: a.maxConcurrency,
    }));
  }
  if (!config.upstreamUrl) return [];
  return [{ name: "default", baseUrl: config.upstreamUrl, apiKey: config.upstreamKey, models: ["*"], modelMap: {}, priority: 1, weight: 1, maxConcurrency: null }];
}

/** The account a gateway without an upstream calls: its client answers 503 upstream_not_configured, as before. */
export function unconfiguredAccount(): UpstreamAccount {
  return { name: "default", baseUrl: "", apiKey: "", models: ["*"], modelMap: {}, priority: 1, weight: 1, maxConcurrency: null };
}

/** One client per account, with the settings' timeouts and same-account retries. */
export function clientsOf(
  accounts: readonly UpstreamAccount[],
  config: Pick<Config, "upstreamConnectTimeoutMs" | "upstreamFirstByteTimeoutMs" | "upstreamIdleTimeoutMs" | "upstreamRetries">,
  fetchFn?: typeof fetch,
): Map<string, Upstream> {
  return new Map(
    accounts.map((a) => [
      a.name,
      new Upstream({
        baseUrl: a.baseUrl,
        apiKey: a.apiKey,
        connectTimeoutMs: config.upstreamConnectTimeoutMs,
        firstByteTimeoutMs: config.upstreamFirstByteTimeoutMs,
        idleTimeoutMs: config.upstreamIdleTimeoutMs,
        retries: config.upstreamRetries,
        fetch: fetchFn,
      }),
    ]),
  );
}

/** Events nobody listens to (the reports plug theirs in). */
export const NO_POOL_EVENTS: PoolEvents = {
  attempt() {},
  failure() {},
  failover() {},
  cooled() {},
  firstByte() {},
};
