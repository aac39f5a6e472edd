/**
 * The first check of every gateway request, before its body is read. Unknown keys count against the client
 * address, and each failure past a few waits out the address's lockout (at most 5 s) before its 401: guessing is
 * slowed while a valid key from the same address (a shared NAT) is never refused. Codes stay those of the spec.
 */
import { isAppError } from "../../errors";
import { bearerToken } from "../../http/bearer";
import { clientAddress } from "../../http/client-address";
import type { CallDeps } from "../gateway-deps";
import type { CachedKey } from "../keys/key-cache";
import { authenticate } from "../limits/admission";

const MAX_FAILURE_DELAY_MS = 5000;

/** `authorization`: the credential as an Authorization header value, when the caller's dialect reads it elsewhere. */
export async function authenticateCaller(
  deps: Pick<CallDeps, "admission" | "keyThrottle">,
  request: Request,
  authorization: string | null = request.headers.get("authorization"),
): Promise<CachedKey> {
  try {
    try {
      return authenticate(deps.admission, authorization);
    } catch (err) {
      // Not in the cache: a key created a moment ago elsewhere may not have reached it yet.
      if (!isAppError(err) || err.code !== "invalid_api_key") throw err;
      const found = await deps.admission.keys.resolve(bearerToken(authorization)!);
      if (!found) throw err;
      return found;
    }
  } catch (err) {
    if (isAppError(err) && err.code === "invalid_api_key") {
      const address = clientAddress(request);
      deps.keyThrottle.fail(address);
      const waitMs = Math.min(MAX_FAILURE_DELAY_MS, deps.keyThrottle.retryAfterMs(address));
      if (waitMs > 0) await Bun.sleep(waitMs);
    }
    throw err;
  }
}
