/** PoolReport and PoolCounters: the state operators see, from the shared health and this process's counts. */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { PoolCounters } from "../../src/gateway/upstream/pool-counters";
import type { UpstreamAccount } from "../../src/gateway/upstream/pool-port";
import { PoolReport, modelListProbe, stateOf } from "../../src/gateway/upstream/pool-report";
import { MemoryPoolState } from "../../src/gateway/upstream/pool-state-memory";
import { UpstreamRefusal } from "../../src/gateway/upstream/upstream-errors";

const T = Date.parse("2026-05-01T10:00:00Z");
const healthy = { coolingUntil: null, modelCoolingUntil: {}, disabled: null, probing: false, reason: null, inFlight: 0 };
const account = (name: string): UpstreamAccount => ({ name, baseUrl: `https://${name}.example/v1`, apiKey: `sk-${name}-secret`, models: ["*"], modelMap: {}, priority: 1, weight: 1, maxConcurrency: null });

describe("stateOf", () => {
  test("disabled before probing before cooling before healthy; a passed deadline is healthy", () => {
    expect(stateOf({ ...healthy, disabled: { reason: "auth", manual: false }, probing: true, coolingUntil: T + 1 }, T)).toEqual({ state: "disabled", until: null, reason: "auth" });
    expect(stateOf({ ...healthy, probing: true, reason: "server_error" }, T)).toEqual({ state: "probing", until: null, reason: "server_error" });
    expect(stateOf({ ...healthy, coolingUntil: T + 5000, reason: "rate_limited" }, T)).toEqual({ state: "cooling", until: "2026-05-01T10:00:05.000Z", reason: "rate_limited" });
    expect(stateOf({ ...healthy, coolingUntil: T, reason: "rate_limited" }, T)).toEqual({ state: "healthy", until: null, reason: null });
  });

  test("only some models cooling: cooling until the last of them, and the reason names them", () => {
    expect(stateOf({ ...healthy, modelCoolingUntil: { "gpt-b": T + 2000, "gpt-a": T + 9000 }, reason: "rate_limited" }, T)).toEqual({
      state: "cooling",
      until: "2026-05-01T10:00:09.000Z",
      reason: "rate_limited (only gpt-a, gpt-b)",
    });
  });
});

describe("PoolReport", () => {
  const setup = () => {
    const state = new MemoryPoolState(() => T);
    const counters = new PoolCounters();
    const probed: string[] = [];
    const report = new PoolReport({
      accounts: [account("primary"), account("backup")],
      state,
      counters,
      probe: async (a) => (probed.push(a.name), { ok: true, status: 200, message: "fine", ms: 1 }),
      now: () => T,
    });
    return { state, counters, report, probed };
  };

  test("lists every configured account in order with its counts; an operator's disable is manual", async () => {
    const { state, counters, report } = setup();
    counters.attempt("primary");
    counters.failure("primary", "timeout");
    counters.failure("primary", "timeout");
    await state.cool("backup", null, T + 1000, "server_error");
    await report.disable("primary");
    const list = await report.list();
    expect(list.map((a) => [a.name, a.state, a.reason])).toEqual([
      ["primary", "disabled", "disabled by an operator"],
      ["backup", "cooling", "server_error"],
    ]);
    expect(list[0]!.counters).toEqual({ requests: 1, failures: { timeout: 2 }, failovers: 0, cooldowns: 0 });
    expect(JSON.stringify(list)).not.toContain("secret");
    expect((await state.read(["primary"])).get("primary")!.disabled).toEqual({ reason: "disabled by an operator", manual: true });
    await report.enable("primary");
    expect((await report.list())[0]!.state).toBe("healthy");
  });

  test("an unknown name is a not_found error for test, disable and enable", async () => {
    const { report, probed } = setup();
    for (const run of [() => report.test("nobody"), () => report.disable("nobody"), () => report.enable("nobody")]) {
      const err = await run().catch((e) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err.status).toBe(404);
    }
    expect(probed).toEqual([]);
    expect(await report.test("backup")).toEqual({ ok: true, status: 200, message: "fine", ms: 1 });
    expect(probed).toEqual(["backup"]);
  });
});

describe("modelListProbe", () => {
  test("a refusal reports the upstream's status; an unreachable upstream reports none", async () => {
    const refused = modelListProbe(() => ({ listModels: async () => { throw new UpstreamRefusal("upstream_error", "The upstream refused the gateway's credentials (401).", {}, 401, "", true); } }));
    expect(await refused(account("a"))).toMatchObject({ ok: false, status: 401, message: "The upstream refused the gateway's credentials (401)." });
    const gone = modelListProbe(() => ({ listModels: async () => { throw new TypeError("fetch failed: sk-a-secret"); } }));
    expect(await gone(account("a"))).toMatchObject({ ok: false, status: null, message: "the upstream could not be reached" });
  });
});
