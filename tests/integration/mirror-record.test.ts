/**
 * The database notes which mirror holds its asset files, and a server started with another one is refused
 * (issue 30): on PostgreSQL with the files in a radosgw bucket, `gantry serve` without the S3 settings, or with
 * another bucket, exits naming the bucket the files are in, instead of starting and answering 404 for every file.
 * A fresh database takes any mirror until its first file is stored; a database that had files before the note
 * existed gets it at the first start whose mirror holds them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { defaultConfig, type Config } from "../../src/config";
import { createDeps } from "../../src/deps";
import { silentLogger } from "../../src/log";
import { MirrorMismatchError } from "../../src/site/downloads/mirror-record";
import { MIRROR_RECORD_KEY, parseMirrorLocation } from "../../src/site/downloads/rules/mirror-location";
import { refusedStart } from "../reliability/serve-process";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { s3Server, s3Unavailable, type S3Server } from "../support/s3";
import { tempDirs } from "../support/temp-dirs";
import { SQL } from "bun";

const unavailable = postgresUnavailable() ?? s3Unavailable();

/** `gantry serve` on these settings, which must refuse to start: its exit code and output. */
async function refusedServe(dataDir: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const r = await refusedStart(dataDir, env);
  return { code: r.code, output: r.stdout + r.stderr };
}

if (unavailable) {
  console.warn(`mirror record tests skipped: ${unavailable}`);
  test.skip(`mirror record: ${unavailable}`, () => {});
} else {
  const tempDir = tempDirs();
  let s3: S3Server;
  const databases: Array<{ drop(): Promise<void> }> = [];
  const s3Config = (bucket: string): Partial<Config> => ({
    s3Bucket: bucket,
    s3Endpoint: s3.endpoint,
    s3Region: s3.region,
    s3AccessKeyId: s3.accessKeyId,
    s3SecretAccessKey: s3.secretAccessKey,
  });
  const s3Env = (bucket: string): Record<string, string> => ({
    GANTRY_S3_BUCKET: bucket,
    GANTRY_S3_ENDPOINT: s3.endpoint,
    GANTRY_S3_REGION: s3.region,
    GANTRY_S3_ACCESS_KEY_ID: s3.accessKeyId,
    GANTRY_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  });
  const database = async () => {
    const db = await freshDatabase();
    databases.push(db);
    return db.url;
  };
  /** Opens the deps as a server would (the mirror checked), runs `fn`, closes them. */
  const withDeps = async <T>(config: Partial<Config>, fn: (deps: Awaited<ReturnType<typeof createDeps>>) => Promise<T>): Promise<T> => {
    const deps = await createDeps(defaultConfig({ dataDir: tempDir("mirror-record"), ...config }), { log: silentLogger });
    try {
      return await fn(deps);
    } finally {
      await deps.close();
    }
  };
  const publish = (config: Partial<Config>, version: string) =>
    withDeps(config, async (deps) => {
      await deps.releases.catalog.create(version, {}, true);
      await deps.releases.catalog.upload(version, `app-${version}.zip`, new Blob([`bytes of ${version}`]).stream(), `bytes of ${version}`.length);
      return deps.meta.get(MIRROR_RECORD_KEY);
    });

  beforeAll(async () => {
    s3 = await s3Server();
  }, 120_000);

  afterAll(async () => {
    for (const db of databases) await db.drop();
  });

  describe("which mirror holds the files", () => {
    let url: string;
    let bucket: string;

    beforeAll(async () => {
      url = await database();
      bucket = await s3.createBucket();
    }, 60_000);

    test("a fresh database takes any mirror; the first file stored records its bucket", async () => {
      // No files yet: started without a bucket, then with one, both fine, and nothing recorded.
      expect(await withDeps({ databaseUrl: url }, (deps) => deps.meta.get(MIRROR_RECORD_KEY))).toBeNull();
      const recorded = await publish({ databaseUrl: url, ...s3Config(bucket) }, "1.0.0");
      expect(parseMirrorLocation(recorded!)).toEqual({ kind: "s3", bucket, endpoint: s3.endpoint });
    }, 60_000);

    test("gantry serve without the S3 settings refuses to start, naming the bucket", async () => {
      const r = await refusedServe(tempDir("no-bucket"), { GANTRY_DATABASE_URL: url });
      expect(r.code).toBe(1);
      expect(r.output).toContain(`this database's asset files are in the S3 bucket "${bucket}"`);
      expect(r.output).toContain(`GANTRY_S3_BUCKET=${bucket}`);
      expect(r.output).not.toContain("listening");
    }, 90_000);

    test("gantry serve with another bucket refuses to start, naming both", async () => {
      const other = await s3.createBucket();
      const r = await refusedServe(tempDir("other-bucket"), { GANTRY_DATABASE_URL: url, ...s3Env(other) });
      expect(r.code).toBe(1);
      expect(r.output).toContain(`this database's asset files are in the S3 bucket "${bucket}"`);
      expect(r.output).toContain(`this instance uses the S3 bucket "${other}"`);
      expect(r.output).not.toContain(s3.secretAccessKey);
    }, 90_000);

    test("the recorded bucket starts, and a one-shot command cannot store into another mirror", async () => {
      await withDeps({ databaseUrl: url, ...s3Config(bucket) }, async (deps) => {
        const [release] = await deps.releases.store.list();
        expect(release!.assets[0]!.mirrored).toBe(true);
      });
      // A CLI command does not check the mirror at start, but its first write does.
      const deps = await createDeps(defaultConfig({ dataDir: tempDir("cli"), databaseUrl: url }), { log: silentLogger, checkMirror: false });
      try {
        await deps.releases.catalog.create("1.0.1", {}, true);
        await expect(deps.releases.catalog.upload("1.0.1", "app.zip", new Blob(["x"]).stream(), 1)).rejects.toThrow(`the S3 bucket "${bucket}"`);
      } finally {
        await deps.close();
      }
    }, 60_000);
  });

  describe("a database with files from before the note", () => {
    test("is recorded at the start whose mirror holds its files; another mirror starts with a warning and records nothing", async () => {
      const url = await database();
      const bucket = await s3.createBucket();
      await publish({ databaseUrl: url, ...s3Config(bucket) }, "2.0.0");
      // As a database written by a binary without the note.
      const sql = new SQL(url);
      await sql`DELETE FROM meta WHERE key = ${MIRROR_RECORD_KEY}`;
      // Without the bucket, nothing says where the files are: the start goes on (pull-through may fill the
      // mirror again), and nothing is recorded.
      expect(await withDeps({ databaseUrl: url }, (deps) => deps.meta.get(MIRROR_RECORD_KEY))).toBeNull();
      // With the bucket that holds them, the start records it; from then on a start without it is refused.
      await withDeps({ databaseUrl: url, ...s3Config(bucket) }, async () => {});
      const [row] = await sql`SELECT value FROM meta WHERE key = ${MIRROR_RECORD_KEY}`;
      await sql.close();
      expect(parseMirrorLocation(row.value)).toEqual({ kind: "s3", bucket, endpoint: s3.endpoint });
      await expect(withDeps({ databaseUrl: url }, async () => {})).rejects.toBeInstanceOf(MirrorMismatchError);
    }, 90_000);
  });
}
