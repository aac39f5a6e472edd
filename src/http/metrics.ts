/** What the app reports to metrics; the Prometheus implementation is in prometheus.ts. */
export interface Metrics {
  /** Once per gateway request, when it settles (call.ts). */
  gatewayRequest(endpoint: string, status: number, errorCode: string | null, seconds: number, upstreamTtfbMs: number | null): void;
  /** Once per HTTP request of any route; `route` is the route template (`/admin/api/keys/:id`), never the raw path. */
  httpRequest(route: string, method: string, status: number): void;
  /** Tokens of a settled gateway request (the settler's onSettled hook). */
  tokensSettled(inputTokens: number, outputTokens: number): void;
  /** An upstream account was tried (the pool's events; `account` is a configured account name, never a key). */
  upstreamAttempt(account: string): void;
  /** An attempt on an account failed, by kind (rate_limited, quota, auth, server_error, timeout, connect, …). */
  upstreamFailure(account: string, kind: string): void;
  /** A call moved on from this account to another before its first content. */
  upstreamFailover(account: string): void;
  /** The account was cooled (or its cooldown extended). */
  upstreamCooled(account: string): void;
  /** Time to the first byte of an attempt on this account. */
  upstreamFirstByte(account: string, seconds: number): void;
  /** The Prometheus text exposition. */
  exposition(): Promise<{ contentType: string; body: string }>;
}
