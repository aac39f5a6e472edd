/**
 * The HeartbeatLimitStore contract, against the interface only: per address, `perMinute` heartbeats per clock
 * minute and `clientsPerHour` different client ids per clock hour; a client id already counted this hour always
 * passes the id check; a refusal consumes nothing and says how long until its window ends; addresses are apart.
 */
import { describe, expect, test } from "bun:test";
import type { HeartbeatLimitSettings, HeartbeatLimitStore } from "../../src/site/heartbeats/heartbeat-limit-store";

export function heartbeatLimitsConformance(backend: string, open: (limits: HeartbeatLimitSettings) => Promise<HeartbeatLimitStore>): void {
  // A fixed hour start (and addresses unique per run: a shared Redis keeps what earlier runs counted).
  const HOUR = Date.parse("2026-01-01T10:00:00Z");
  const address = () => `198.51.100.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`;

  describe(`HeartbeatLimitStore conformance: ${backend}`, () => {
    test("perMinute heartbeats an address may send in a clock minute; the next minute starts afresh", async () => {
      const store = await open({ perMinute: 5, clientsPerHour: 0 });
      try {
        const a = address();
        const verdicts = [];
        for (let i = 0; i < 8; i++) verdicts.push(await store.admit(a, "same-client", HOUR + 10_000));
        expect(verdicts.filter((v) => v.ok)).toHaveLength(5);
        expect(verdicts[5]).toEqual({ ok: false, reason: "rate", retryAfterMs: 50_000 });
        // Another address is not touched by the first one's count.
        expect((await store.admit(address(), "same-client", HOUR + 10_000)).ok).toBe(true);
        expect((await store.admit(a, "same-client", HOUR + 60_000)).ok).toBe(true);
      } finally {
        store.close();
      }
    });

    test("clientsPerHour different ids per address and hour: known ids keep passing, a new one is refused until the next hour", async () => {
      const store = await open({ perMinute: 0, clientsPerHour: 3 });
      try {
        const a = address();
        for (const id of ["c1", "c2", "c3"]) expect((await store.admit(a, id, HOUR + 1000)).ok).toBe(true);
        expect(await store.admit(a, "c4", HOUR + 1000)).toEqual({ ok: false, reason: "clients", retryAfterMs: 3_599_000 });
        // The refused id was not counted, and the known ones still report as often as they like.
        for (let i = 0; i < 5; i++) expect((await store.admit(a, "c2", HOUR + 2000 + i)).ok).toBe(true);
        expect((await store.admit(a, "c4", HOUR + 3000)).ok).toBe(false);
        expect((await store.admit(address(), "c4", HOUR + 3000)).ok).toBe(true);
        expect((await store.admit(a, "c4", HOUR + 3_600_000)).ok).toBe(true);
      } finally {
        store.close();
      }
    });

    test("a heartbeat refused for the rate adds no id; zero limits admit everything", async () => {
      const limited = await open({ perMinute: 1, clientsPerHour: 2 });
      try {
        const a = address();
        expect((await limited.admit(a, "x1", HOUR)).ok).toBe(true);
        expect((await limited.admit(a, "x2", HOUR)).ok).toBe(false);
        // Next minute: x2 takes the second id place, so x2 was not counted when refused.
        expect((await limited.admit(a, "x2", HOUR + 60_000)).ok).toBe(true);
        expect((await limited.admit(a, "x3", HOUR + 120_000))).toMatchObject({ ok: false, reason: "clients" });
      } finally {
        limited.close();
      }
      const open0 = await open({ perMinute: 0, clientsPerHour: 0 });
      try {
        const a = address();
        for (let i = 0; i < 50; i++) expect((await open0.admit(a, `id-${i}`, HOUR)).ok).toBe(true);
      } finally {
        open0.close();
      }
    });
  });
}
