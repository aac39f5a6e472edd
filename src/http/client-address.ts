/**
 * Who is on the other end of each request. The server shell records how to ask the socket for its peer before
 * the app runs (Elysia's handle() has no server to ask). The client address is the peer, or, when the peer is a trusted
 * proxy, the nearest untrusted address of its X-Forwarded-For (the ones further left could be forged by
 * the client). Tests that call app.handle() directly get "127.0.0.1".
 */
import { isTrustedPeer, parseIp } from "../rules/ip-ranges";
import { existingRequestState, requestState } from "./request-state";

/** Most requests never need their address (it is read on failed keys, by trusted-proxy rules, by throttles). */
export function recordClientAddress(request: Request, lookup: () => string | undefined, trustedProxies: readonly string[] = []): void {
  requestState(request).peer = { lookup, trusted: trustedProxies };
}

/** The socket's peer: a proxy, when there is one. */
export function peerAddress(request: Request): string {
  const p = existingRequestState(request)?.peer;
  if (!p) return "127.0.0.1";
  return (p.peer ??= p.lookup() ?? "127.0.0.1");
}

/** The client as far as trusted proxies vouch for it: what per-client limits count. */
export function clientAddress(request: Request): string {
  const p = existingRequestState(request)?.peer;
  if (!p) return "127.0.0.1";
  if (p.client === undefined) {
    const peer = peerAddress(request);
    p.client = p.trusted.length > 0 ? forwardedClient(peer, request.headers.get("x-forwarded-for"), p.trusted) : peer;
  }
  return p.client;
}

export function forwardedClient(peer: string, forwardedFor: string | null, trusted: readonly string[]): string {
  if (!forwardedFor || !isTrustedPeer(peer, trusted)) return peer;
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (parseIp(hop) === null) return peer; // garbage in the chain: trust nothing of it
    if (!isTrustedPeer(hop, trusted)) return hop;
  }
  return hops[0] ?? peer;
}
