/** Backups under load, restores, upgrades (pre-migration backup, refusing a newer database), the systemd unit. */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { SchemaTooNewError, openDatabase } from "../../src/store/sqlite/db";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/store/sqlite/migrations";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";

const BUN = "./node_modules/.bin/bun";
const cli = (args: string[]) => Bun.spawnSync([BUN, "src/main.ts", ...args], { stderr: "pipe", stdout: "pipe" });

/** Servers this file started: a test that fails half-way must not leave one running. */
const servers: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const proc of servers) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
});
// After the hook above: the servers are gone before their directories go.
const tempDir = tempDirs();
const freshDir = () => tempDir("backup");

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function startServe(dir: string) {
  const port = await freePort();
  const proc = Bun.spawn([BUN, "src/main.ts", "serve", "--port", String(port), "--data-dir", dir, "--admin-token", "gat-backup-test-token-000000", "--heartbeat-rpm", "0", "--heartbeat-clients-per-hour", "0"], {
    // Nobody reads its log: a pipe left unread would fill up under the heartbeat load and stall the server.
    stdout: "ignore",
    stderr: "ignore",
  });
  servers.push(proc);
  const url = `http://127.0.0.1:${port}`;
  const healthy = () => fetch(`${url}/healthz`).then((r) => r.ok, () => false);
  await pollUntil(healthy, Boolean, { timeoutMs: 10_000, stepMs: 50, what: "the server to answer /healthz" });
  return { proc, url };
}

describe("backup and restore", () => {
  test("a backup taken under write load restores to exactly what it captured", async () => {
    const dir = freshDir();
    const { proc, url } = await startServe(dir);
    let writing = true;
    let sent = 0;
    /** Heartbeats the server acknowledged: the load is measured by what was written, not by time. */
    let acknowledged = 0;
    const load = (async () => {
      while (writing) {
        const replies = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${url}/api/v1/client/heartbeat`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-app-client-id": `client-${sent++}` },
              body: JSON.stringify({ app: "demo", version: "1.0.0", platform: "linux" }),
            }),
          ),
        );
        acknowledged += replies.filter((r) => r.status === 200).length;
      }
    })();
    /** Waits until the server acknowledged `n` more heartbeats. */
    const moreWrites = (n: number) => {
      const from = acknowledged;
      return pollUntil(() => acknowledged - from, (d) => d >= n, { timeoutMs: 10_000, what: `${n} more acknowledged heartbeats` });
    };
    const file = join(freshDir(), "snapshot.db");
    try {
      expect(cli(["keys", "create", "--name", "before-backup", "--data-dir", dir]).exitCode).toBe(0);
      await moreWrites(40);
      const backup = cli(["backup", file, "--data-dir", dir]);
      expect(backup.exitCode).toBe(0);
      await moreWrites(40);
    } finally {
      writing = false;
      await load;
    }

    // The snapshot is consistent and missed the writes after it.
    const snap = new Database(file, { readonly: true });
    expect((snap.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
    const snapClients = (snap.query("SELECT COUNT(*) AS n FROM clients").get() as any).n as number;
    const snapKeys = snap.query("SELECT id, name, hash FROM api_keys ORDER BY id").all();
    snap.close();
    expect(snapClients).toBeGreaterThan(0);
    expect(snapKeys.length).toBe(1);

    // Restore is refused while the server runs...
    const refused = cli(["restore", file, "--data-dir", dir]);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr.toString()).toContain("stop it before restoring");

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const live = new Database(join(dir, "gantry.db"), { readonly: true });
    const liveClients = (live.query("SELECT COUNT(*) AS n FROM clients").get() as any).n as number;
    live.close();
    expect(liveClients).toBeGreaterThan(snapClients);

    // ...and once it is stopped, the restored database is exactly the snapshot; the old one is kept.
    const restored = cli(["restore", file, "--data-dir", dir]);
    expect(restored.exitCode).toBe(0);
    const db = new Database(join(dir, "gantry.db"), { readonly: true });
    expect((db.query("SELECT COUNT(*) AS n FROM clients").get() as any).n).toBe(snapClients);
    expect(db.query("SELECT id, name, hash FROM api_keys ORDER BY id").all()).toEqual(snapKeys);
    db.close();
    expect(readdirSync(dir).some((f) => f.startsWith("gantry.db.before-restore-"))).toBe(true);
  }, 30_000);

  test("restore refuses files that are not healthy Gantry databases", () => {
    const dir = freshDir();
    const junk = join(dir, "junk.db");
    Bun.write(junk, "not a database at all, just some text that is long enough");
    const r1 = cli(["restore", junk, "--data-dir", join(dir, "data")]);
    expect(r1.exitCode).not.toBe(0);
    const other = join(dir, "other.db");
    const o = new Database(other);
    o.exec("CREATE TABLE t (x)");
    o.close();
    const r2 = cli(["restore", other, "--data-dir", join(dir, "data")]);
    expect(r2.exitCode).not.toBe(0);
    expect(r2.stderr.toString()).toContain("not a Gantry database");
    expect(cli(["restore", join(dir, "missing.db"), "--data-dir", dir]).exitCode).not.toBe(0);
    expect(cli(["backup", "--data-dir", dir]).exitCode).toBe(2);
  });
});

describe("upgrades", () => {
  test("pending migrations are preceded by a backup of the old database", () => {
    const dir = freshDir();
    const path = join(dir, "gantry.db");
    const old = new Database(path);
    old.exec(MIGRATIONS[0]);
    old.exec("PRAGMA user_version = 1");
    old.exec("INSERT INTO api_keys (id, name, prefix, hash, created_at, updated_at) VALUES ('key_a', 'a', 'gk-a', 'h', 1, 1)");
    old.close();
    const db = openDatabase(path);
    expect((db.query("PRAGMA user_version").get() as any).user_version).toBe(SCHEMA_VERSION);
    db.close();
    const backups = readdirSync(dir).filter((f) => f.includes(`.pre-v${SCHEMA_VERSION}-from-v1-`));
    expect(backups.length).toBe(1);
    const b = new Database(join(dir, backups[0]), { readonly: true });
    expect((b.query("PRAGMA user_version").get() as any).user_version).toBe(1);
    expect((b.query("SELECT name FROM api_keys").get() as any).name).toBe("a");
    b.close();
    // Opening again migrates nothing and takes no new backup.
    openDatabase(path).close();
    expect(readdirSync(dir).filter((f) => f.endsWith(".bak")).length).toBe(1);
  });

  test("a binary older than the database refuses to start, with a clear message", () => {
    const dir = freshDir();
    const path = join(dir, "gantry.db");
    openDatabase(path).close();
    const db = new Database(path);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openDatabase(path)).toThrow(SchemaTooNewError);
    const r = cli(["keys", "list", "--data-dir", dir]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toContain("newer gantry");
    const check = new Database(path, { readonly: true });
    expect((check.query("PRAGMA user_version").get() as any).user_version).toBe(SCHEMA_VERSION + 1);
    check.close();
  });

  test("a fresh database gets every migration", () => {
    expect(MIGRATIONS.length).toBe(SCHEMA_VERSION);
    const db = openDatabase(":memory:");
    expect((db.query("PRAGMA user_version").get() as any).user_version).toBe(SCHEMA_VERSION);
    db.close();
  });
});

describe("running as a service", () => {
  test("the systemd unit runs as a dedicated user with hardening", () => {
    const r = cli(["service", "install", "--print", "--user", "svc", "--data-dir", "/var/lib/gx", "--binary", "/usr/local/bin/gantry"]);
    expect(r.exitCode).toBe(0);
    const unit = r.stdout.toString();
    for (const line of ["User=svc", "ExecStart=/usr/local/bin/gantry serve", "Restart=on-failure", "NoNewPrivileges=true", "ProtectSystem=strict", "ReadWritePaths=/var/lib/gx", "Environment=GANTRY_DATA_DIR=/var/lib/gx", "KillSignal=SIGTERM"]) {
      expect(unit).toContain(line);
    }
    // Writing for real, but only inside the test's directory: a user that exists already (so, run as root, the
    // command creates no system user) and the environment file beside the unit, not in /etc.
    const dir = freshDir();
    const envFile = join(dir, "etc", "gantry.env");
    const w = cli(["service", "install", "--user", userInfo().username, "--unit-path", join(dir, "gantry.service"), "--data-dir", join(dir, "data"), "--env-file", envFile, "--binary", "/usr/local/bin/gantry"]);
    expect(w.exitCode).toBe(0);
    expect(readFileSync(join(dir, "gantry.service"), "utf8")).toContain(`EnvironmentFile=-${envFile}`);
    // As root it also makes the data dir and a commented environment file; as anyone else it only writes the unit.
    if (process.getuid?.() === 0) {
      expect(existsSync(join(dir, "data"))).toBe(true);
      expect(statSync(envFile).mode & 0o777).toBe(0o600);
    }
    expect(cli(["service", "install", "--print", "--user", "Bad User!"]).exitCode).toBe(2);
  });

  test("--version prints version, commit and build date", () => {
    const r = cli(["--version"]);
    expect(r.stdout.toString()).toMatch(/^gantry \d+\.\d+\.\d+ \(commit \S+, built \S+\)/);
  });
});
