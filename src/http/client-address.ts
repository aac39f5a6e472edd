/**
 * The peer address of each request, as the socket saw it. The server shell records it before the app runs
 * (Elysia's handle() has no server to ask); tests that call app.handle() directly get "127.0.0.1".
 */
const addresses = new WeakMap<Request, string>();

export function recordClientAddress(request: Request, address: string | undefined): void {
  if (address) addresses.set(request, address);
}

export function peerAddress(request: Request): string {
  return addresses.get(request) ?? "127.0.0.1";
}
