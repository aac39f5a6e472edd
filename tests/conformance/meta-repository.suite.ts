/**
 * What every MetaRepository must do, written against the interface only: small named strings, and a
 * first-writer-wins set that two processes (or instances) racing on one key agree on.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { MetaRepository } from "../../src/state/meta-repository";

export interface MetaFixture {
  meta: MetaRepository;
  /** A second handle on the same records, as another process would have. */
  other: MetaRepository;
  close(): Promise<void> | void;
}

export function metaRepositoryConformance(backend: string, make: () => Promise<MetaFixture>): void {
  describe(`MetaRepository conformance: ${backend}`, () => {
    let fx: MetaFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("an unknown key reads null; a set value reads back exactly, and a second set replaces it", async () => {
      const { meta } = await open();
      expect(await meta.get("sync.report")).toBeNull();
      const value = JSON.stringify({ status: "ok", note: "ünïcode ✓", nested: { n: 1 } });
      await meta.set("sync.report", value);
      expect(await meta.get("sync.report")).toBe(value);
      await meta.set("sync.report", "");
      expect(await meta.get("sync.report")).toBe("");
    });

    test("setIfAbsent: the first writer wins, also between two handles, and later writers see its value", async () => {
      const { meta, other } = await open();
      const results = await Promise.all([meta.setIfAbsent("admin.token", "first"), other.setIfAbsent("admin.token", "second")]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? "first" : "second";
      expect(await meta.get("admin.token")).toBe(winner);
      expect(await other.get("admin.token")).toBe(winner);
      expect(await meta.setIfAbsent("admin.token", "third")).toBe(false);
      expect(await other.get("admin.token")).toBe(winner);
    });

    test("a value written through one handle is read through the other", async () => {
      const { meta, other } = await open();
      await meta.set("sync.pages", "42");
      expect(await other.get("sync.pages")).toBe("42");
    });
  });
}
