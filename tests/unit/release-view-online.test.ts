import { expect, test } from "bun:test";
import { withOnlineClients } from "../../src/site/releases/release-view";

test("online clients per release: every spelling of its version counts, other versions and 'unknown' do not", () => {
  const byVersion = { "1.2.0": 5, "v1.2": 2, "1.2.0+build.7": 1, "1.2.0-beta.1": 4, "1.1.0": 3, unknown: 9 };
  const views = withOnlineClients([{ version: "v1.2.0" }, { version: "1.1.0" }, { version: "1.3.0" }, { version: "nightly" }], byVersion);
  expect(views.map((v) => [v.version, v.onlineClients])).toEqual([["v1.2.0", 8], ["1.1.0", 3], ["1.3.0", 0], ["nightly", 0]]);
});
