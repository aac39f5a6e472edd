/**
 * What the gateway's routes use, and nothing more: the composition root's AppDeps satisfies it, and a test
 * can build one by hand.
 */
import type { Config } from "../config";
import type { Logger } from "../log";
import type { Metrics } from "../http/metrics";
import type { FailureThrottle } from "../http/throttle";
import type { AdmissionDeps } from "./limits/admission";
import type { NormalizeOptions } from "./translate/normalize";
import type { ModelList } from "./upstream/model-list";
import type { UpstreamPool } from "./upstream/pool";
import type { StoredResponseRepository } from "./responses/stored-response-repository";
import type { Settler } from "./usage/settle";
import type { LedgerHealth } from "./usage/ledger-health";
import type { StallWatch } from "./pipeline/stall-watch";
import type { ModelAliases } from "./translate/model-aliases";

/** One call's life: authentication, admission, settlement, its log line and metrics. */
export interface CallDeps {
  admission: AdmissionDeps;
  /** Failed API-key attempts per client address (guessing is slowed). */
  keyThrottle: Pick<FailureThrottle, "fail" | "retryAfterMs">;
  settler: Settler;
  /** Refuses new requests while the ledger cannot be written (absent: never refused for it). */
  ledgerHealth?: Pick<LedgerHealth, "check" | "failed">;
  metrics?: Pick<Metrics, "gatewayRequest">;
  log: Logger;
  now: () => number;
}

export interface GatewayDeps extends CallDeps {
  config: Pick<Config, "maxBodyBytes" | "maxInputItems" | "keepAliveSeconds" | "storedResponsesDays" | "storedResponsesPerKey" | "storedBytesPerKey" | "maxUpstreamEventBytes">;
  /** Responses kept for their callers. */
  responses: StoredResponseRepository;
  normalizeOptions: NormalizeOptions;
  /** The upstream accounts: every call to the upstream goes through it (choice, failover, cooldowns). */
  upstreamPool: Pick<UpstreamPool, "post" | "postRaw">;
  models: Pick<ModelList, "get">;
  /** The upstream's name for a model a caller names (GANTRY_MODEL_ALIASES). */
  modelAliases: ModelAliases;
  /** Gives up streams whose caller stopped reading. */
  stalls: Pick<StallWatch, "track" | "untrack">;
}
