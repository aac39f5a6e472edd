/** The settler writes the upstream account that served a request into its ledger row. */
import { expect, test } from "bun:test";
import type { LedgerEntry } from "../../src/gateway/usage/ledger-repository";
import { createSettler, type RequestOutcome } from "../../src/gateway/usage/settle";

test("the ledger row names the account that served the call, null when none did", async () => {
  const rows: LedgerEntry[] = [];
  const settler = createSettler({ ledger: { record: async (e) => void rows.push(e) }, priceOf: () => null });
  const outcome: RequestOutcome = {
    requestId: "req_1", endpoint: "responses", model: "m", status: 200, errorCode: null,
    tokens: { inputTokens: 3, outputTokens: 2, reasoningTokens: 0, cachedTokens: 0 }, startedAt: 0, endedAt: 10, upstreamTtfbMs: 4,
  };
  await settler.settle(null, { ...outcome, account: "backup-eu" });
  await settler.settle(null, { ...outcome, requestId: "req_2" });
  expect(rows.map((r) => r.account)).toEqual(["backup-eu", null]);
});
