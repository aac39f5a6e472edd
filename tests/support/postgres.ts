/**
 * A real PostgreSQL server for tests: Debian's binaries, a cluster in a temporary directory, listening on
 * 127.0.0.1 only, started on first use, shared by every test file of the run and stopped (and removed) by
 * `stopPostgres` after the last one (tests/support/global-teardown.ts). Each fixture gets a database of its own (`freshDatabase`), dropped when it closes.
 *
 * Where the binaries are missing, `postgresUnavailable()` says why, and callers skip with that message
 * (`.ci/system-deps` installs them, so CI never skips).
 */
import { SQL } from "bun";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chownSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PG_ROOT = "/usr/lib/postgresql";

function binDir(): string | null {
  if (!existsSync(PG_ROOT)) return null;
  const versions = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(PG_ROOT, versions[0]!, "bin") : null;
}

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function postgresUnavailable(): string | null {
  if (!binDir()) return `PostgreSQL is not installed (no ${PG_ROOT}/*/bin/initdb; .ci/system-deps installs the Debian package "postgresql")`;
  if (process.getuid?.() === 0 && Bun.spawnSync(["id", "-u", "postgres"]).exitCode !== 0) return "running as root, and there is no postgres user to run the server as";
  return null;
}

export interface PostgresServer {
  port: number;
  dir: string;
  admin: SQL;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
  /** `pg_ctl restart` (a fault: every connection is cut; the data stays). */
  restart(): Promise<void>;
  /** Stops the server (a fault: every connection is cut, new ones refused) until `up()`; the data stays. */
  down(): Promise<void>;
  /** Starts it again after `down()`, on the same port and data. */
  up(): Promise<void>;
  /** A new empty database on this server. */
  createDatabase(): Promise<string>;
  /** The postmaster's pid (its children are the backends), for CPU accounting. */
  pid(): number;
}

type Server = PostgresServer;

let server: Promise<Server> | null = null;

/** initdb refuses to run as root: as root, the server runs as Debian's postgres user. */
function asServerUser(cmd: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
}

function run(cmd: string[], what: string): void {
  const r = Bun.spawnSync(asServerUser(cmd), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString() || r.stdout.toString()}`);
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** `durable`: fsync as in production (the benchmarks); tests run without it. */
async function start(durable = false): Promise<Server> {
  const bin = binDir()!;
  const dir = mkdtempSync(join(tmpdir(), "gantry-pg-"));
  if (process.getuid?.() === 0) {
    const uid = Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim());
    const gid = Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim());
    chownSync(dir, uid, gid);
  }
  run([join(bin, "initdb"), "-D", join(dir, "data"), "--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8"], "initdb");
  // A port taken between the probe and the start makes pg_ctl fail: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const startCommand = [join(bin, "pg_ctl"), "-D", join(dir, "data"), "-l", join(dir, "log"), "-w", "-t", "60", "start",
        "-o", `-p ${port} -k ${dir} -h 127.0.0.1 ${durable ? "" : "-c fsync=off -c full_page_writes=off "}-c max_connections=200`];
      run(startCommand, "pg_ctl start");
      const admin = new SQL({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, max: 2 });
      const stop = async () => {
        await admin.close().catch(() => {});
        Bun.spawnSync(asServerUser([join(bin, "pg_ctl"), "-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]));
        rmSync(dir, { recursive: true, force: true });
      };
      // A run cut short (a crash, ^C) still takes the server down with it.
      process.once("exit", () => void Bun.spawnSync(asServerUser([join(bin, "pg_ctl"), "-D", join(dir, "data"), "-m", "immediate", "stop"])));
      const restart = async () => {
        run([join(bin, "pg_ctl"), "-D", join(dir, "data"), "-l", join(dir, "log"), "-m", "fast", "-w", "-t", "60", "restart"], "pg_ctl restart");
      };
      // Not spawned synchronously: what this process serves (a fake upstream) goes on while the server stops.
      const down = async () => {
        const p = Bun.spawn(asServerUser([join(bin, "pg_ctl"), "-D", join(dir, "data"), "-m", "fast", "-w", "-t", "60", "stop"]), { stdout: "pipe", stderr: "pipe" });
        if ((await p.exited) !== 0) throw new Error(`pg_ctl stop failed: ${await new Response(p.stderr).text()}`);
      };
      const up = async () => {
        run(startCommand, "pg_ctl start");
      };
      let made = 0;
      const createDatabase = async () => {
        const name = `gantry_own_${process.pid}_${++made}`;
        await admin.unsafe(`CREATE DATABASE ${name}`);
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      };
      const pid = () => Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      return { port, dir, admin, stop, restart, down, up, createDatabase, pid };
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

/** The server's URL for database `name`. */
async function urlOf(name: string): Promise<string> {
  server ??= start();
  const s = await server;
  return `postgres://postgres@127.0.0.1:${s.port}/${name}`;
}

let counter = 0;

/** Creates an empty database and returns its URL and a way to drop it (closing its connections first). */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(`cannot start PostgreSQL for this test: ${unavailable}`);
  server ??= start();
  const s = await server;
  const name = `gantry_test_${process.pid}_${++counter}`;
  await s.admin.unsafe(`CREATE DATABASE ${name}`);
  return {
    url: await urlOf(name),
    async drop() {
      await s.admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** A PostgreSQL server of the caller's own (to restart in fault tests); the caller stops it. */
export async function startPostgresServer(options: { durable?: boolean } = {}): Promise<PostgresServer> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(`cannot start PostgreSQL for this test: ${unavailable}`);
  return start(options.durable);
}

/** Stops the server (if one was started) and removes its directory. */
export async function stopPostgres(): Promise<void> {
  const s = server;
  server = null;
  if (s) await (await s).stop();
}
