/** What every UsageLedger must do, written against the interface only. */
import { afterEach, describe, expect, test } from "bun:test";
import type { LedgerEntry, UsageLedger } from "../../src/gateway/usage/ledger-repository";

export interface UsageLedgerFixture {
  ledger: UsageLedger;
  close(): Promise<void> | void;
}

const HOUR = 3_600_000;
const T0 = Date.parse("2026-06-01T00:00:00Z");

let n = 0;
function row(fields: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    ts: T0, requestId: `req_${++n}`, keyId: "key_a", model: "m", endpoint: "responses", status: 200, errorCode: null,
    inputTokens: 10, outputTokens: 5, reasoningTokens: 1, cachedTokens: 2, cost: 0.25, durationMs: 100, upstreamTtfbMs: 20,
    estimated: false, account: null, ...fields,
  };
}

export function usageLedgerConformance(backend: string, make: () => Promise<UsageLedgerFixture>): void {
  describe(`UsageLedger conformance: ${backend}`, () => {
    let fx: UsageLedgerFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("a recorded row reads back whole, newest first, per key or all", async () => {
      const { ledger } = await open();
      const first = row({ ts: T0, keyId: "key_a" });
      const second = row({ ts: T0 + 1, keyId: "key_b", status: 499, errorCode: "client_closed", upstreamTtfbMs: null, inputTokens: 7, outputTokens: 3, cost: 0, estimated: true });
      await ledger.record(first);
      await ledger.record(second);
      expect(await ledger.recent(10)).toEqual([second, first]);
      expect(await ledger.recent(10, "key_a")).toEqual([first]);
      expect(await ledger.recent(1)).toEqual([second]);
      expect(await ledger.recent(10, "key_none")).toEqual([]);
    });

    test("the upstream account that served a call is recorded; a row without one reads null", async () => {
      const { ledger } = await open();
      const served = row({ ts: T0, account: "primary" });
      const failover = row({ ts: T0 + 1, account: "backup-eu" });
      const refused = row({ ts: T0 + 2, status: 429, errorCode: "rate_limit_rpm", account: null });
      const { account: _, ...older } = row({ ts: T0 + 3 });
      await ledger.recordMany([served, failover]);
      await ledger.record(refused);
      await ledger.record(older);
      expect((await ledger.recent(10)).map((r) => r.account)).toEqual([null, null, "backup-eu", "primary"]);
    });

    test("a probe write succeeds and leaves nothing behind", async () => {
      const { ledger } = await open();
      const kept = row();
      await ledger.record(kept);
      await ledger.probe();
      await ledger.probe();
      expect(await ledger.recent(10)).toEqual([kept]);
      expect(await ledger.series(0, HOUR)).toEqual([{ bucket: T0, requests: 1, errors: 0, inputTokens: 10, outputTokens: 5, cost: 0.25 }]);
    });

    test("a row without a key (refused before authentication) is kept", async () => {
      const { ledger } = await open();
      const anonymous = row({ keyId: null, status: 401, errorCode: "invalid_api_key" });
      await ledger.record(anonymous);
      expect(await ledger.recent(1)).toEqual([anonymous]);
    });

    test("record resolves once the row is readable; concurrent records all land", async () => {
      const { ledger } = await open();
      await Promise.all(Array.from({ length: 600 }, (_, i) => ledger.record(row({ ts: T0 + i }))));
      expect(ledger.pending).toBe(0);
      expect(await ledger.recent(1000)).toHaveLength(600);
    });

    test("flush waits for rows recorded before it", async () => {
      const { ledger } = await open();
      const writes = Array.from({ length: 10 }, () => ledger.record(row()));
      await ledger.flush();
      expect(await ledger.recent(100)).toHaveLength(10);
      await Promise.all(writes);
    });

    test("series buckets requests, errors, tokens and cost; fractional timestamps land in their bucket", async () => {
      const { ledger } = await open();
      await ledger.recordMany([
        row({ ts: T0 + 0.4 }),
        row({ ts: T0 + HOUR - 1, status: 502, errorCode: "upstream_error" }),
        row({ ts: T0 + HOUR, keyId: "key_b", cost: 1.5 }),
        row({ ts: T0 - 1 }),
      ]);
      expect(await ledger.series(T0, HOUR)).toEqual([
        { bucket: T0, requests: 2, errors: 1, inputTokens: 20, outputTokens: 10, cost: 0.5 },
        { bucket: T0 + HOUR, requests: 1, errors: 0, inputTokens: 10, outputTokens: 5, cost: 1.5 },
      ]);
      expect(await ledger.series(T0, HOUR, "key_b")).toEqual([{ bucket: T0 + HOUR, requests: 1, errors: 0, inputTokens: 10, outputTokens: 5, cost: 1.5 }]);
    });

    test("latency series: averages and maximum of time to first byte, null when nothing reached the upstream", async () => {
      const { ledger } = await open();
      await ledger.recordMany([
        row({ ts: T0, upstreamTtfbMs: 10, durationMs: 100 }),
        row({ ts: T0 + 1, upstreamTtfbMs: 30, durationMs: 300 }),
        row({ ts: T0 + HOUR, upstreamTtfbMs: null, durationMs: 2 }),
      ]);
      expect(await ledger.latencySeries(T0, HOUR)).toEqual([
        { bucket: T0, avgTtfbMs: 20, maxTtfbMs: 30, avgDurationMs: 200 },
        { bucket: T0 + HOUR, avgTtfbMs: null, maxTtfbMs: null, avgDurationMs: 2 },
      ]);
    });

    test("close commits what is waiting, then refuses new rows", async () => {
      const { ledger } = await open();
      const pending = ledger.record(row());
      await ledger.close();
      await pending;
      expect(await ledger.recent(10)).toHaveLength(1);
      await expect(ledger.record(row())).rejects.toThrow();
    });
  });
}
