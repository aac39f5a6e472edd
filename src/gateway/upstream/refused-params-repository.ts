/**
 * The port of what Gantry learnt about its upstream's refusals: the request parameters an upstream answered
 * "Unsupported parameter" to, per upstream and model. Kept so that a restart (or another instance on the same
 * store) does not relearn them through failed calls. Read once at start, written only when something is learnt.
 */
export interface RefusedParam {
  model: string;
  param: string;
}

export interface RefusedParamRepository {
  /** Every parameter learnt for `upstream` (its base URL, as `upstreamIdentity` writes it), in no particular order. */
  list(upstream: string): Promise<RefusedParam[]>;
  /** Records one; recording it again (by this process or another) changes nothing. `at`: epoch ms. */
  add(upstream: string, model: string, param: string, at: number): Promise<void>;
}

/**
 * How an upstream is named in the store: its base URL without credentials, query or trailing slash, so that
 * `https://api.example.com/v1/` and `https://api.example.com/v1` are one upstream and a user:password in the URL is
 * never written down.
 */
export function upstreamIdentity(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return baseUrl;
  }
}
