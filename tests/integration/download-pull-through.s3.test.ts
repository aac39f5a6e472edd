/**
 * Pull-through into an S3 mirror (radosgw): the first complete pass of a proxied asset lands in the bucket (spooled,
 * hashed and uploaded in parts above 8 MiB) while it streams to the caller; the asset then records its SHA-256 and
 * size, and later requests are answered from the bucket without asking the upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { s3Server, s3Unavailable } from "../support/s3";

const unavailable = s3Unavailable();
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const SIZE = 9 * 1024 * 1024 + 123;
const data = crypto.getRandomValues(new Uint8Array(SIZE));

if (unavailable) {
  console.warn(`S3 pull-through test skipped: ${unavailable}`);
  test.skip(`S3 pull-through: ${unavailable}`, () => {});
} else {
  let origin: Server<undefined>;
  let g: Gantry;
  let asked = 0;

  beforeAll(async () => {
    origin = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        asked++;
        return new Response(data, { headers: { "content-type": "application/octet-stream" } });
      },
    });
    const s3 = await s3Server();
    g = await startGantry({
      config: {
        s3Bucket: await s3.createBucket(),
        s3Endpoint: s3.endpoint,
        s3Region: s3.region,
        s3AccessKeyId: s3.accessKeyId,
        s3SecretAccessKey: s3.secretAccessKey,
        // The upstream is on loopback: fetched from only because the operator allows the host.
        allowedFetchHosts: ["127.0.0.1"],
      },
    });
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
    await origin?.stop(true);
  });

  const link = async (id: number) => (await fetch(`${g.url}/api/v1/download/${id}`, { redirect: "manual" })).headers.get("location")!;

  test("a proxied asset's first complete pass is stored in the bucket and served from there", async () => {
    await g.deps.releases.catalog.create("4.0.0", {}, true);
    const asset = await g.deps.releases.catalog.addUrlAsset("4.0.0", "big-4.0.0-linux-x64.tar.gz", `http://127.0.0.1:${origin.port}/big`);
    const full = await fetch(await link(asset.id));
    expect(full.status).toBe(200);
    expect(sha256(new Uint8Array(await full.arrayBuffer()))).toBe(sha256(data));
    const { value } = await pollUntil(() => g.deps.releases.store.getAsset(asset.id), (a) => a?.mirrored === true, { what: "the asset mirrored", timeoutMs: 30_000 });
    expect(value).toMatchObject({ sha256: sha256(data), size: SIZE });
    const askedBefore = asked;
    const part = await fetch(await link(asset.id), { headers: { range: `bytes=${SIZE - 100}-` } });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(SIZE - 100));
    expect(asked).toBe(askedBefore);
  }, 60_000);
}
