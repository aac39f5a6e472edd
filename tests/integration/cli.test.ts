/**
 * The command line as an operator meets it (a separate process, as they run it): help at every level that
 * touches no data, settings listed per command, maintenance commands that refuse a directory without a
 * database, wrong usage as one line, settings problems in words, and `keys usage` per day.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config";
import { openDatabase } from "../../src/store/sqlite/db";
import { startGantry, type Gantry } from "../support/harness";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;

/** Runs `gantry ARGS` without any GANTRY_* setting leaking in from the environment. */
function gantry(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GANTRY_") && v !== undefined) env[k] = v;
  const p = Bun.spawnSync([BUN, "src/main.ts", ...args], { cwd: ROOT, env });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

let tmp: string;
/** A data dir that does not exist: no command below may create it. */
let nowhere: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "gantry-cli-"));
  nowhere = join(tmp, "no-such-dir");
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("help", () => {
  const cases = [
    ["--help"],
    ["help"],
    ["-h"],
    ["help", "keys", "usage"],
    ["serve", "--help"],
    ["serve", "help"],
    ["demo", "--help"],
    ["keys", "--help"],
    ["keys", "help"],
    ["keys", "-h"],
    ["keys", "help", "create"],
    ["keys", "--help", "create"],
    ["keys", "create", "--help"],
    ["keys", "create", "-h", "--name", "x"],
    ["keys", "usage", "help"],
    ["releases", "--help"],
    ["releases", "publish", "--help"],
    ["announcements", "--help"],
    ["announcements", "preview", "-h"],
    ["stats", "-h"],
    ["stats", "series", "--help"],
    ["backup", "--help"],
    ["restore", "help"],
    ["service", "--help"],
    ["service", "install", "--help"],
    ["admin", "--help"],
    ["admin", "help"],
    ["admin", "reset-token", "--help"],
    ["version", "--help"],
  ];
  for (const args of cases) {
    test(`gantry ${args.join(" ")}: usage on stdout, exit 0, no data dir touched`, () => {
      const r = gantry(...args, "--data-dir", nowhere);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Usage: gantry/);
      expect(existsSync(nowhere)).toBe(false);
    });
  }

  test("a command's help lists the settings it reads, not all of them", () => {
    const keys = gantry("keys", "create", "--help").stdout;
    expect(keys).toContain("--data-dir");
    expect(keys).toContain("GANTRY_DATA_DIR");
    expect(keys).not.toContain("--port");
    expect(keys).not.toContain("GANTRY_UPSTREAM_URL");
    expect(keys).toContain("--quota-tokens");

    const sync = gantry("releases", "sync", "--help").stdout;
    expect(sync).toContain("GANTRY_SYNC_TOKEN");
    expect(sync).not.toContain("GANTRY_PORT");

    const serve = gantry("serve", "--help").stdout;
    for (const s of SETTINGS) expect(serve).toContain(`--${s.flag} `);

    const demo = gantry("demo", "--help").stdout;
    expect(demo).toContain("--port");
    expect(demo).not.toContain("--upstream-url");

    expect(gantry("service", "install", "--help").stdout).not.toContain("Settings");
  });

  test("options before the help flag do not matter", () => {
    const r = gantry("keys", "--data-dir", nowhere, "--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("Usage: gantry keys <command>");
    expect(existsSync(nowhere)).toBe(false);
  });

  test("a group alone shows its commands and exits 2 (incomplete)", () => {
    const r = gantry("keys");
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("usage ID|NAME");
  });
});

describe("a data dir without a database", () => {
  const maintenance = [
    ["keys", "list"],
    ["keys", "show", "k"],
    ["keys", "usage", "k"],
    ["keys", "disable", "k"],
    ["keys", "update", "k", "--rpm", "5"],
    ["stats", "clients"],
    ["stats", "series"],
    ["admin", "reset-token"],
    ["backup", join(tmpdir(), "never-written.db")],
    ["releases", "list"],
    ["releases", "delete", "1.0.0"],
    ["announcements", "list"],
    ["announcements", "show", "1"],
    ["announcements", "preview"],
  ];
  for (const args of maintenance) {
    test(`gantry ${args.join(" ")} says so and creates nothing`, () => {
      const r = gantry(...args, "--data-dir", nowhere);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`gantry ${args.slice(0, args[0] === "backup" ? 1 : 2).join(" ")}: no Gantry database in ${nowhere}; start the server once (gantry serve) or pass --data-dir\n`);
      expect(r.stdout).toBe("");
      expect(existsSync(nowhere)).toBe(false);
    });
  }

  test("refused input to a command that adds content creates nothing", () => {
    const r = gantry("keys", "create", "--name", "k", "--not-before", "2027-01-01T00:00Z", "--expires-at", "2026-01-01T00:00Z", "--data-dir", nowhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("must be earlier than --expires-at");
    expect(existsSync(nowhere)).toBe(false);
    const a = gantry("announcements", "create", "--title", "t", "--body", "b", "--cta-url", "javascript:alert(1)", "--data-dir", nowhere);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain("javascript:");
    const v = gantry("releases", "publish", "not-a-version", join(ROOT, "package.json"), "--data-dir", nowhere);
    expect(v.code).toBe(2);
    expect(v.stderr).toContain("is not a version");
    expect(existsSync(nowhere)).toBe(false);
  });

  test("commands that add content create it, and say where", () => {
    const dir = join(tmp, "provisioned");
    const r = gantry("keys", "create", "--name", "first", "--json", "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).name).toBe("first");
    expect(r.stderr).toBe(`gantry: there was no database in ${dir}: created a new one (the server must use this data dir)\n`);
    // The second time there is one: no note.
    const again = gantry("keys", "create", "--name", "second", "--data-dir", dir);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe("");
    expect(gantry("keys", "list", "--data-dir", dir).stdout).toContain("second");
  });
});

describe("wrong usage: one line, exit 2", () => {
  let dir: string;
  beforeAll(() => {
    dir = join(tmp, "usage");
    openDatabase(join(dir, "gantry.db")).close();
  });

  const cases: Array<[string[], string]> = [
    [["keys", "create", "--x"], "gantry keys create: unknown option --x (see gantry keys create --help)"],
    [["keys", "create", "--na", "x"], "gantry keys create: unknown option --na; did you mean --name? (see gantry keys create --help)"],
    [["keys", "create", "--name", "--json"], "gantry keys create: --name needs a value (for a value that starts with '-', write --name=VALUE) (see gantry keys create --help)"],
    [["keys", "list", "--json=yes"], "gantry keys list: --json takes no value (see gantry keys list --help)"],
    [["keys", "list", "--port", "9000"], "gantry keys list: --port is a setting this command does not use (see gantry keys list --help)"],
    [["keys", "lis"], "gantry keys: unknown command 'lis' (see gantry keys --help)"],
    [["keys", "create"], "gantry keys create: needs --name NAME (see gantry keys create --help)"],
    [["keys", "show"], "gantry keys show: needs a key id or name (see gantry keys show --help)"],
    [["keys", "usage", "k", "--days", "0"], "gantry keys usage: --days must be a whole number from 1 to 90, got '0' (see gantry keys usage --help)"],
    [["stats", "clients", "extra"], "gantry stats clients: unexpected argument 'extra' (see gantry stats clients --help)"],
    [["releases", "publish", "1.0.0"], "gantry releases publish: needs VERSION and at least one FILE (see gantry releases publish --help)"],
    [["backup"], "gantry backup: needs a FILE (see gantry backup --help)"],
    [["service", "uninstall"], "gantry service: unknown command 'uninstall' (see gantry service --help)"],
    [["admin", "reset"], "gantry admin: unknown command 'reset' (see gantry admin --help)"],
    [["nonsense"], "gantry: unknown command 'nonsense' (see gantry --help)"],
    // The rules shared with the admin API, in the flags the user typed (not 'expiresAt'), values still quoted.
    [["announcements", "create", "--title", "T", "--body", "B", "--expires-at", "2020-01-01"], "gantry announcements create: --expires-at must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T08:00:00Z or 2026-01-01T08:00:00+08:00), got '2020-01-01'"],
    [["announcements", "create", "--title", "T", "--body", "B", "--start-at", "2021-01-01T00:00:00Z", "--expires-at", "2020-01-01T00:00:00Z"], "gantry announcements create: --expires-at must be later than --start-at"],
    [["announcements", "create", "--title", "T", "--body", "B", "--min-version", "2.0", "--max-version", "1.0"], "gantry announcements create: --min-version 2.0 is above --max-version 1.0"],
  ];
  for (const [args, line] of cases) {
    test(`gantry ${args.join(" ")}`, () => {
      const r = gantry(...args, "--data-dir", dir);
      expect(r.stderr).toBe(line + "\n");
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
    });
  }

  test("an option without its value", () => {
    const r = gantry("keys", "create", "--data-dir", dir, "--name");
    expect(r.stderr).toBe("gantry keys create: --name needs a value (see gantry keys create --help)\n");
    expect(r.code).toBe(2);
  });

  test("messages from the shared services keep the CLI's style: lower case after the prefix, no final period", () => {
    const r = gantry("keys", "show", "nobody", "--data-dir", dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("gantry keys show: no key 'nobody'\n");
    const a = gantry("announcements", "show", "424242", "--data-dir", dir);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/^gantry announcements show: [a-z][^\n]*[^.]\n$/);
  });
});

describe("settings problems", () => {
  test("four bad settings: four sentences, exit 2, nothing created", () => {
    const r = gantry("serve", "--port", "abc", "--log-level", "loud", "--upstream-url", "ftp://x", "--prices", "{bad", "--data-dir", nowhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("gantry serve: invalid settings:\n");
    expect(r.stderr).toContain("--port (GANTRY_PORT): 'abc' is not a port number");
    expect(r.stderr).toContain("--log-level (GANTRY_LOG_LEVEL): 'loud' is not one of debug, info, warn, error");
    expect(r.stderr).toContain("--upstream-url (GANTRY_UPSTREAM_URL): 'ftp://x' is not an http:// or https:// URL");
    expect(r.stderr).toContain("--prices (GANTRY_PRICES): not valid JSON (");
    expect(r.stderr).not.toContain("union value");
    expect(existsSync(nowhere)).toBe(false);
  });

  test("--trusted-proxies banana is refused", () => {
    const r = gantry("serve", "--trusted-proxies", "10.0.0.0/8,banana", "--data-dir", nowhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "gantry serve: invalid setting: --trusted-proxies (GANTRY_TRUSTED_PROXIES): 'banana' is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8)\n",
    );
  });

  test("a missing TLS file is a settings error naming the path, not ENOENT", () => {
    const cert = join(tmp, "missing-cert.pem");
    const key = join(tmp, "missing-key.pem");
    const r = gantry("serve", "--tls-cert", cert, "--tls-key", key, "--port", "0", "--data-dir", nowhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `gantry serve: invalid settings:\n  --tls-cert (GANTRY_TLS_CERT): cannot read '${cert}' (no such file)\n  --tls-key (GANTRY_TLS_KEY): cannot read '${key}' (no such file)\n`,
    );
    expect(existsSync(nowhere)).toBe(false);
  });
});

describe("keys", () => {
  let g: Gantry;
  let dir: string;
  const DAY = 86_400_000;
  beforeAll(async () => {
    dir = join(tmp, "keys");
    g = await startGantry({ config: { dataDir: dir }, databasePath: join(dir, "gantry.db") });
    await g.createKey({ name: "alpha" });
    const key = (await g.deps.keys.get("alpha"))!;
    const now = Date.now();
    const entry = (ts: number, status: number, input: number, output: number) => ({
      ts, requestId: `r-${ts}`, keyId: key.id, model: "m", endpoint: "/v1/responses", status, errorCode: null,
      inputTokens: input, outputTokens: output, reasoningTokens: 0, cachedTokens: 0, cost: 0, durationMs: 1, upstreamTtfbMs: 1,
    });
    await g.deps.ledger.recordMany([
      entry(now, 200, 100, 10),
      entry(now - 1, 200, 200, 20),
      entry(now - 2 * DAY, 500, 0, 0),
      entry(now - 3 * DAY + 1000, 200, 1000, 100), // the day before a 3-day window: whole UTC days only
      entry(now - 10 * DAY, 200, 1000, 100),
    ]);
  });
  afterAll(async () => {
    await g.stop();
  });

  test("keys usage: a row per UTC day with requests (days without any left out), then the total", () => {
    const r = gantry("keys", "usage", "alpha", "--days", "3", "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("per UTC day with requests: 2 of the last 3 UTC days");
    const lines = r.stdout.split("\n");
    const header = lines.findIndex((l) => l.startsWith("DAY"));
    expect(lines[header].split(/\s+/)).toEqual(["DAY", "REQUESTS", "ERRORS", "INPUT", "OUTPUT", "COST"]);
    const rows = lines.slice(header + 1, header + 4).map((l) => l.split(/\s+/));
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const now = Date.now();
    expect(rows.map((c) => c[0])).toEqual([day(now - 2 * DAY), day(now), "total"]);
    expect(rows.map((c) => c.slice(1, 5))).toEqual([
      ["1", "1", "0", "0"],
      ["2", "0", "300", "30"],
      ["3", "1", "300", "30"],
    ]);
  });

  test("keys usage of a key without requests: one line, no table of zeros", async () => {
    await g.createKey({ name: "idle" });
    const r = gantry("keys", "usage", "idle", "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No requests in the last 30 UTC days.");
    expect(r.stdout).not.toContain("DAY");
    expect(r.stdout.split("\n").length).toBeLessThan(8);
  });

  test("keys usage --json is the admin API's answer", async () => {
    const r = gantry("keys", "usage", "alpha", "--days", "3", "--json", "--data-dir", dir);
    expect(r.code).toBe(0);
    const cli = JSON.parse(r.stdout);
    const api = await (await g.admin("/admin/api/keys/alpha/usage?days=3")).json();
    expect(cli).toEqual(api);
    expect(cli.daily.map((d: any) => d.requests)).toEqual([1, 2]);
  });

  test("keys list and show give the state and the validity period", () => {
    expect(gantry("keys", "create", "--name", "later", "--not-before", "2999-01-01T00:00:00Z", "--data-dir", dir).code).toBe(0);
    const list = gantry("keys", "list", "--data-dir", dir).stdout;
    const row = list.split("\n").find((l) => l.includes(" later "))!;
    expect(row).toContain(" not_yet_valid ");
    expect(row).toContain(" from 2999-01-01T00:00Z ");
    expect(list.split("\n")[0]).toMatch(/STATE\s+VALID/);
    const show = gantry("keys", "show", "later", "--data-dir", dir).stdout;
    expect(show).toContain("state:       not_yet_valid");
    expect(show).toContain("valid:       from 2999-01-01T00:00Z");
  });
});
