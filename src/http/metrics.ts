/** What the app reports to metrics; the Prometheus implementation lives beside it. */
export interface Metrics {
  gatewayRequest(endpoint: string, status: number, errorCode: string | null, seconds: number, upstreamTtfbMs: number | null): void;
}
