/**
 * What every RefusedParamRepository must do, written against the interface only: parameters learnt per upstream and
 * model, read back by any handle on the same records, recorded once however often (and by however many processes or
 * instances) they are learnt.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { RefusedParam, RefusedParamRepository } from "../../src/gateway/upstream/refused-params-repository";

export interface RefusedParamsFixture {
  repo: RefusedParamRepository;
  /** A second handle on the same records, as another process or instance would have. */
  other: RefusedParamRepository;
  close(): Promise<void> | void;
}

const sorted = (rows: RefusedParam[]) => rows.map((r) => `${r.model}:${r.param}`).sort();

export function refusedParamsConformance(backend: string, make: () => Promise<RefusedParamsFixture>): void {
  describe(`RefusedParamRepository conformance: ${backend}`, () => {
    let fx: RefusedParamsFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("nothing learnt reads empty; what is added reads back, per upstream", async () => {
      const { repo } = await open();
      expect(await repo.list("https://a.example/v1")).toEqual([]);
      await repo.add("https://a.example/v1", "gpt-5", "temperature", 1_700_000_000_000);
      await repo.add("https://a.example/v1", "gpt-5", "top_p", 1_700_000_000_001);
      await repo.add("https://a.example/v1", "gpt-5-mini", "temperature", 1_700_000_000_002);
      await repo.add("https://b.example/v1", "gpt-5", "service_tier", 1_700_000_000_003);
      expect(sorted(await repo.list("https://a.example/v1"))).toEqual(["gpt-5-mini:temperature", "gpt-5:temperature", "gpt-5:top_p"]);
      expect(sorted(await repo.list("https://b.example/v1"))).toEqual(["gpt-5:service_tier"]);
      expect(await repo.list("https://c.example/v1")).toEqual([]);
    });

    test("adding one again, through either handle and at the same moment, keeps one record and fails nothing", async () => {
      const { repo, other } = await open();
      await Promise.all([
        repo.add("https://a.example/v1", "m", "top_p", 1),
        other.add("https://a.example/v1", "m", "top_p", 2),
        repo.add("https://a.example/v1", "m", "top_p", 3),
      ]);
      expect(sorted(await other.list("https://a.example/v1"))).toEqual(["m:top_p"]);
      expect(sorted(await repo.list("https://a.example/v1"))).toEqual(["m:top_p"]);
    });

    test("names are kept exactly: case, odd characters and long model ids", async () => {
      const { repo, other } = await open();
      const model = `Vendor/Model:ä-${"x".repeat(300)}`;
      await repo.add("https://a.example/v1", model, "Top_P", 1);
      await repo.add("https://a.example/v1", model.toLowerCase(), "top_p", 1);
      expect(sorted(await other.list("https://a.example/v1"))).toEqual([`${model.toLowerCase()}:top_p`, `${model}:Top_P`].sort());
    });
  });
}
