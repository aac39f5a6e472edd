/** What the app reports to metrics; the Prometheus implementation is in prometheus.ts. */
export interface Metrics {
  /** Once per gateway request, when it settles (call.ts). */
  gatewayRequest(endpoint: string, status: number, errorCode: string | null, seconds: number, upstreamTtfbMs: number | null): void;
  /** Once per HTTP request of any route; `route` is the route template (`/admin/api/keys/:id`), never the raw path. */
  httpRequest(route: string, method: string, status: number): void;
  /** Tokens of a settled gateway request (the settler's onSettled hook). */
  tokensSettled(inputTokens: number, outputTokens: number): void;
  /** The Prometheus text exposition. */
  exposition(): Promise<{ contentType: string; body: string }>;
}
