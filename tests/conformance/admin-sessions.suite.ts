/**
 * What every AdminSessionStore must do, written against the interface only: ids that are not the token,
 * idle and absolute expiry, sessions that end when the admin token is rotated, sign-out.
 */
import { describe, expect, test } from "bun:test";
import { csrfMatches } from "../../src/http/csrf";
import type { AdminSessionStore, SessionOptions } from "../../src/admin/admin-session-store";

export type MakeSessions = (now: () => number, options: Partial<SessionOptions>) => Promise<AdminSessionStore>;

export function adminSessionsConformance(backend: string, make: MakeSessions): void {
  describe(`AdminSessionStore conformance: ${backend}`, () => {
    test("a new session is found by its id and fingerprint; the id is random and names neither", async () => {
      const s = await make(() => 0, {});
      const a = await s.create("fp1");
      const b = await s.create("fp1");
      expect(a.id).not.toBe(b.id);
      expect(a.id.length).toBeGreaterThanOrEqual(32);
      expect(a.id).not.toContain("fp1");
      expect(a.session.csrf).not.toBe(b.session.csrf);
      expect(await s.get(a.id, "fp1")).toMatchObject({ csrf: a.session.csrf, tokenFingerprint: "fp1" });
      expect(await s.get(b.id, "fp1")).toMatchObject({ csrf: b.session.csrf });
    });

    test("use keeps a session alive until its absolute age; idleness ends it sooner", async () => {
      let now = 0;
      const s = await make(() => now, { idleMs: 100, maxAgeMs: 250 });
      const { id } = await s.create("fp1");
      for (now = 90; now <= 180; now += 90) expect(await s.get(id, "fp1")).not.toBeNull();
      now = 260;
      expect(await s.get(id, "fp1")).toBeNull();

      const idle = await s.create("fp1");
      now += 101;
      expect(await s.get(idle.id, "fp1")).toBeNull();
    });

    test("a session made with another admin token is gone for good", async () => {
      const s = await make(() => 0, {});
      const { id } = await s.create("fp1");
      expect(await s.get(id, "fp2")).toBeNull();
      expect(await s.get(id, "fp1")).toBeNull();
    });

    test("unknown, empty, oversized and null ids are simply not found", async () => {
      const s = await make(() => 0, {});
      await s.create("fp1");
      for (const id of [null, "", "x", "a".repeat(10_000)]) expect(await s.get(id, "fp1")).toBeNull();
      const { id } = await s.create("fp1");
      expect(await s.get(id, null)).toBeNull();
    });

    test("destroy signs out that session only; the CSRF token matches only itself", async () => {
      const s = await make(() => 0, {});
      const a = await s.create("fp1");
      const b = await s.create("fp1");
      expect(csrfMatches(a.session, a.session.csrf)).toBe(true);
      expect(csrfMatches(a.session, b.session.csrf)).toBe(false);
      expect(csrfMatches(a.session, a.session.csrf.slice(1))).toBe(false);
      expect(csrfMatches(a.session, null)).toBe(false);
      await s.destroy(a.id);
      await s.destroy(null);
      expect(await s.get(a.id, "fp1")).toBeNull();
      expect(await s.get(b.id, "fp1")).not.toBeNull();
    });
  });
}
