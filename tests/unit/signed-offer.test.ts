import { describe, expect, test } from "bun:test";
import { isOffered, offeredReleases, servedMeanwhile } from "../../src/site/releases/rules/signed-offer";

const published = { remoteId: null, mirrored: true, upstreamUrl: null, signature: null };
const syncedVerified = { remoteId: 1, mirrored: true, upstreamUrl: "https://example.com/a", signature: "sig" };
const syncedProxied = { remoteId: 2, mirrored: false, upstreamUrl: "https://example.com/b", signature: null };
const syncedUnsigned = { remoteId: 3, mirrored: true, upstreamUrl: "https://example.com/c", signature: null };

describe("signed-offer: which assets are offered", () => {
  test("without the key every asset is, as before", () => {
    for (const a of [published, syncedVerified, syncedProxied, syncedUnsigned]) expect(isOffered(a, false)).toBe(true);
    expect(servedMeanwhile(syncedProxied, false)).toBe("proxy");
  });

  test("with the key a synced asset is offered only mirrored with a signature; published ones as stored", () => {
    expect(isOffered(published, true)).toBe(true);
    expect(isOffered(syncedVerified, true)).toBe(true);
    expect(isOffered(syncedProxied, true)).toBe(false);
    expect(isOffered(syncedUnsigned, true)).toBe(false);
    expect(servedMeanwhile(syncedProxied, true)).toBe("withheld");
    expect(servedMeanwhile(syncedVerified, true)).toBe("mirror");
    expect(servedMeanwhile({ ...published, mirrored: false }, true)).toBe("unavailable");
  });

  test("offeredReleases drops the withheld assets and leaves releases with none withheld as they were", () => {
    const whole = { version: "1.0.0", assets: [published, syncedVerified] };
    const mixed = { version: "2.0.0", assets: [syncedVerified, syncedProxied, syncedUnsigned] };
    const releases = [mixed, whole];
    expect(offeredReleases(releases, false)).toBe(releases);
    const [m, w] = offeredReleases(releases, true);
    expect(m.assets).toEqual([syncedVerified]);
    expect(mixed.assets).toHaveLength(3);
    expect(w).toBe(whole);
  });
});
