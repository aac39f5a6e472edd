/**
 * What every AnnouncementRepository and ClientRepository must do, written against the interfaces only: a
 * backend's test file calls `engagementRepositoriesConformance` with a way to open an empty store of both.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { AnnouncementFields, AnnouncementRepository } from "../../src/site/announcements/announcement-repository";
import type { ClientReport, ClientRepository } from "../../src/site/heartbeats/client-repository";

export interface EngagementFixture {
  announcements: AnnouncementRepository;
  clients: ClientRepository;
  /** Committed announcement changes the repository reported (its change-feed touches). */
  announcementChanges(): number;
  close(): Promise<void> | void;
}

const FIELDS: AnnouncementFields = {
  type: "modal",
  displayType: "banner",
  targetSurface: "client",
  level: "warning",
  title: "Maintenance",
  body: "Tonight",
  ctaText: "More",
  ctaUrl: "https://example.invalid/m",
  minVersion: "1.0.0",
  maxVersion: "1.9.9",
  startAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2026-02-01T00:00:00.000Z",
  dismissKey: "k1",
  testOnly: true,
  app: "demo",
  locales: { "zh-CN": { title: "维护", body: "今晚" } },
};

const report = (clientId: string, at: number, more: Partial<ClientReport> = {}): ClientReport => ({
  clientId, firstAt: at, at, count: 1, app: "demo", version: "1.0.0", platform: "linux", arch: "x64", runtime: "electron", locale: "en", ...more,
});

export function engagementRepositoriesConformance(backend: string, make: () => Promise<EngagementFixture>): void {
  let fx: EngagementFixture | null = null;
  const open = async () => (fx = await make());
  afterEach(async () => {
    await fx?.close();
    fx = null;
  });

  describe(`AnnouncementRepository conformance: ${backend}`, () => {
    test("insert stores every field, list is oldest first, get by id", async () => {
      const { announcements } = await open();
      const a = await announcements.insert(FIELDS, 1000);
      const b = await announcements.insert({ ...FIELDS, title: "Second", locales: {} }, 2000);
      expect(a).toEqual({ id: a.id, ...FIELDS, createdAt: 1000, updatedAt: 1000 });
      expect(b.id).not.toBe(a.id);
      expect((await announcements.list()).map((x) => x.title)).toEqual(["Maintenance", "Second"]);
      expect(await announcements.get(a.id)).toEqual(a);
      expect(await announcements.get(999_999)).toBeNull();
    });

    test("update replaces the fields and keeps the creation time; unknown ids are null / false", async () => {
      const { announcements } = await open();
      const a = await announcements.insert(FIELDS, 1000);
      const changed = await announcements.update(a.id, { ...FIELDS, title: "Changed", testOnly: false, locales: {} }, 5000);
      expect(changed).toEqual({ id: a.id, ...FIELDS, title: "Changed", testOnly: false, locales: {}, createdAt: 1000, updatedAt: 5000 });
      expect(await announcements.update(999_999, FIELDS, 5000)).toBeNull();
      expect(await announcements.delete(999_999)).toBe(false);
      expect(await announcements.delete(a.id)).toBe(true);
      expect(await announcements.list()).toEqual([]);
    });

    test("every committed write is reported as a change; reads and misses are not", async () => {
      const { announcements, announcementChanges } = await open();
      const start = announcementChanges();
      const a = await announcements.insert(FIELDS, 1);
      await announcements.update(a.id, FIELDS, 2);
      await announcements.delete(a.id);
      expect(announcementChanges() - start).toBe(3);
      await announcements.list();
      await announcements.delete(a.id);
      expect(announcementChanges() - start).toBe(3);
    });
  });

  describe(`ClientRepository conformance: ${backend}`, () => {
    test("appended reports are seen by every read, one row per client", async () => {
      const { clients } = await open();
      await clients.append([report("a", 1000), report("b", 1000)]);
      await clients.append([report("a", 2000, { version: "1.1.0" })]);
      expect(await clients.knownCount()).toBe(2);
      expect(await clients.onlineCount(1500)).toBe(1);
      expect(await clients.onlineCount(0)).toBe(2);
      expect(await clients.onlineGroups(0)).toEqual(
        expect.arrayContaining([
          { app: "demo", version: "1.1.0", platform: "linux", arch: "x64", runtime: "electron", locale: "en", clients: 1 },
          { app: "demo", version: "1.0.0", platform: "linux", arch: "x64", runtime: "electron", locale: "en", clients: 1 },
        ]),
      );
    });

    test("a field not reported keeps its value; a late report does not override a newer one", async () => {
      const { clients } = await open();
      await clients.append([report("a", 2000, { version: "2.0.0", locale: "de" })]);
      await clients.append([report("a", 3000, { version: null, locale: null, platform: "windows" })]);
      await clients.append([report("a", 1000, { version: "0.1.0" })]);
      expect(await clients.onlineGroups(0)).toEqual([{ app: "demo", version: "2.0.0", platform: "windows", arch: "x64", runtime: "electron", locale: "de", clients: 1 }]);
    });

    test("fold reports how much it moved and nothing is lost either way", async () => {
      const { clients } = await open();
      await clients.append(Array.from({ length: 50 }, (_, i) => report(`c${i}`, 1000 + i)));
      const first = await clients.fold();
      expect(first.moved === 0 || first.moved === 50).toBe(true);
      expect(first.more).toBe(false);
      expect(await clients.fold()).toEqual({ moved: 0, more: false });
      expect(await clients.knownCount()).toBe(50);
    });

    test("a fold limited to one unit of work says whether more is left, and folding until it is not moves everything", async () => {
      const { clients } = await open();
      const n = 1500;
      await clients.append(Array.from({ length: n }, (_, i) => report(`m${i}`, 1000 + i)));
      let moved = 0;
      let rounds = 0;
      for (let r = await clients.fold(1); ; r = await clients.fold(1)) {
        moved += r.moved;
        rounds += 1;
        if (!r.more) break;
        expect(rounds).toBeLessThan(n);
      }
      expect(moved === 0 || moved === n).toBe(true);
      expect(await clients.fold(1)).toEqual({ moved: 0, more: false });
      expect(await clients.knownCount()).toBe(n);
    });

    test("reportedVersion: the version of the client's latest report, null when unknown or never reported", async () => {
      const { clients } = await open();
      await clients.append([report("a", 1000, { version: "1.0.0" }), report("b", 1000, { version: null })]);
      await clients.append([report("a", 2000, { version: "v1.1" })]);
      await clients.fold();
      expect(await clients.reportedVersion("a")).toBe("v1.1");
      expect(await clients.reportedVersion("b")).toBeNull();
      expect(await clients.reportedVersion("nobody")).toBeNull();
    });

    test("pruning forgets clients last seen before the bound", async () => {
      const { clients } = await open();
      await clients.append([report("old", 1000), report("new", 5000)]);
      expect(await clients.pruneClients(2000)).toBe(1);
      expect(await clients.knownCount()).toBe(1);
      expect(await clients.onlineCount(0)).toBe(1);
    });

    test("samples: a minute keeps its peak; reads are from-inclusive, to-exclusive, oldest first; pruning", async () => {
      const { clients } = await open();
      await clients.recordSamples([{ minute: 60_000, online: 3 }, { minute: 120_000, online: 5 }, { minute: 180_000, online: 1 }]);
      await clients.recordSamples([{ minute: 120_000, online: 2 }, { minute: 60_000, online: 7 }]);
      expect(await clients.samples(60_000, 180_000)).toEqual([{ minute: 60_000, online: 7 }, { minute: 120_000, online: 5 }]);
      expect(await clients.pruneSeries(120_000)).toBe(1);
      expect(await clients.samples(0, 1e12)).toEqual([{ minute: 120_000, online: 5 }, { minute: 180_000, online: 1 }]);
    });
  });
}
