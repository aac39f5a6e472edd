/** Admission of an authenticated call: the key's checks and limits, then the connection held for a long reply. */
import { holdConnection } from "../../http/connection-hold";
import type { CallDeps } from "../gateway-deps";
import type { CachedKey } from "../keys/key-cache";
import { admit, type AdmissionRequest, type Lease } from "../limits/admission";
import type { GatewayCall } from "./call-state";

export async function admitCall(deps: Pick<CallDeps, "admission" | "ledgerHealth">, call: GatewayCall, key: CachedKey, req: AdmissionRequest): Promise<Lease> {
  // Work whose usage could not be recorded would be withheld anyway: refused before it costs anything.
  deps.ledgerHealth?.check();
  call.lease = await admit(deps.admission, key, req);
  // Admitted: its reply may run for minutes (until settlement, which puts the idle cut back).
  holdConnection(call.request);
  return call.lease;
}
