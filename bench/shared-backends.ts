/**
 * PostgreSQL and Redis for the scale-out scenarios: Debian's servers in temporary directories (the test
 * support's), PostgreSQL with fsync on as in production, both pinned to the servers' CPU so their work is on
 * the same side of the machine as Gantry's, and their pids listed so that a run's CPU includes theirs.
 */
import { spawnSync } from "node:child_process";
import { childPids } from "./proc-stats";
import { postgresUnavailable, startPostgresServer } from "../tests/support/postgres";
import { redisUnavailable, startRedisServer } from "../tests/support/redis";

export interface SharedBackends {
  databaseUrl: string;
  redisUrl: string;
  /** The postmaster (its backends count as its descendants) and the Redis server. */
  pids(): number[];
  stop(): Promise<void>;
}

export function sharedBackendsUnavailable(): string | null {
  return postgresUnavailable() ?? redisUnavailable();
}

export async function startSharedBackends(cpus: string | null): Promise<SharedBackends> {
  const pg = await startPostgresServer({ durable: true });
  const redis = await startRedisServer().catch(async (err) => {
    await pg.stop();
    throw err;
  });
  const pids = () => [pg.pid(), redis.pid()].filter((p) => p > 0);
  // Backends forked later inherit the postmaster's affinity.
  if (cpus && Bun.which("taskset")) {
    for (const pid of [...pids(), ...childPids(pg.pid())]) spawnSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" });
  }
  return {
    databaseUrl: await pg.createDatabase(),
    redisUrl: redis.url,
    pids,
    async stop() {
      await redis.stop();
      await pg.stop();
    },
  };
}
