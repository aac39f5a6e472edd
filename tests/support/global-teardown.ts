/**
 * Preloaded by `bun test` (bunfig.toml): starts S3 up front on the shared backend, and stops the servers that test support starts once per run and shares
 * between files (PostgreSQL, Redis, S3), after the last test file.
 */
import { afterAll } from "bun:test";
import { stopPostgres } from "./postgres";
import { stopRedis } from "./redis";
import { s3Server, stopS3 } from "./s3";

// On the shared backend every test server gets a bucket: the S3 cluster (about 10 s to start) is started
// before the first file, not inside a test's or hook's time.
if (process.env.GANTRY_TEST_BACKEND === "shared") await s3Server();

afterAll(async () => {
  await Promise.all([stopPostgres(), stopRedis(), stopS3()]);
});
