/** Upstream accounts in the settings: `[[upstreams]]` in gantry.toml or GANTRY_UPSTREAMS, problems named by account and field, keys never shown. */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, changedSettings, describeConfig, loadConfig } from "../../src/config";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function dirWith(toml: string | null, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), "gantry-upstreams-"));
  dirs.push(dir);
  if (toml !== null) {
    writeFileSync(join(dir, "gantry.toml"), toml);
    chmodSync(join(dir, "gantry.toml"), mode);
  }
  return dir;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

const TOML = `
[[upstreams]]
name = "primary"
url = "https://api.example.com/v1/"
key_env = "PRIMARY_KEY"
models = ["*"]
priority = 1
weight = 3
max_concurrency = 200
[upstreams.model_map]
"gpt-5.4" = "gpt-5.4-2026"

[[upstreams]]
name = "backup"
url = "http://10.0.0.5:8000/v1"
key_env = "BACKUP_KEY"
priority = 2
weight = 0
`;

describe("upstream accounts", () => {
  test("[[upstreams]] tables resolve, keys from their environment variables, defaults filled", () => {
    const dir = dirWith(TOML);
    const config = loadConfig({ "data-dir": dir }, { PRIMARY_KEY: "sk-primary-0123456789", BACKUP_KEY: "sk-backup-0123456789" });
    expect(config.upstreams).toEqual([
      { name: "primary", url: "https://api.example.com/v1", apiKey: "sk-primary-0123456789", keyInline: false, models: ["*"], modelMap: { "gpt-5.4": "gpt-5.4-2026" }, priority: 1, weight: 3, maxConcurrency: 200 },
      { name: "backup", url: "http://10.0.0.5:8000/v1", apiKey: "sk-backup-0123456789", keyInline: false, models: ["*"], modelMap: {}, priority: 2, weight: 0, maxConcurrency: null },
    ]);
    // The settings line and describeConfig never show a key.
    const shown = JSON.stringify([describeConfig(config), changedSettings(config)]);
    expect(shown).not.toContain("sk-primary");
    expect(shown).not.toContain("sk-backup");
    expect(shown).toContain('"name":"primary"');
  });

  test("GANTRY_UPSTREAMS holds the same list as JSON", () => {
    const dir = dirWith(null);
    const env = { GANTRY_UPSTREAMS: JSON.stringify([{ name: "a", url: "http://127.0.0.1:9/v1", key: "k-a" }, { name: "b", url: "http://127.0.0.1:10/v1", key_env: "B_KEY", models: ["gpt-5.4"] }]), B_KEY: "k-b" };
    const config = loadConfig({ "data-dir": dir }, env);
    expect(config.upstreams.map((a) => [a.name, a.apiKey, a.models, a.priority, a.weight])).toEqual([
      ["a", "k-a", ["*"], 1, 1],
      ["b", "k-b", ["gpt-5.4"], 1, 1],
    ]);
  });

  test("every problem names the account and its field", () => {
    const dir = dirWith(null);
    const accounts = [
      { name: "a", url: "ftp://x", key_env: "UNSET_VAR", priority: -1, weight: 1.5, colour: "red" },
      { name: "a", url: "https://x/v1", key: "k" },
      { name: "bad name!", url: "https://x/v1" },
      { name: "c", url: "https://x/v1", key: "k", key_env: "K", max_concurrency: 0, models: [] },
    ];
    const p = problemsOf(() => loadConfig({ "data-dir": dir }, { GANTRY_UPSTREAMS: JSON.stringify(accounts) }));
    const label = '--upstreams (GANTRY_UPSTREAMS, from the environment): upstream account';
    expect(p).toContain(`${label} "a": url must be an http:// or https:// URL (the base URL with its version prefix)`);
    expect(p).toContain(`${label} "a": key_env names UNSET_VAR, which is not set (or empty) in the environment`);
    expect(p.some((x) => x.startsWith(`${label} "a": priority must be a whole number`))).toBe(true);
    expect(p.some((x) => x.startsWith(`${label} "a": weight must be a whole number`))).toBe(true);
    expect(p.some((x) => x.startsWith(`${label} "a": colour is not a field of an account`))).toBe(true);
    expect(p).toContain(`${label} "a": name is used by another account (names must be unique)`);
    expect(p.some((x) => x.startsWith(`${label} #3: name must be`))).toBe(true);
    expect(p).toContain(`${label} #3: key is missing: give key_env (the environment variable holding the key) or key`);
    expect(p).toContain(`${label} "c": key and key_env are exclusive: give one`);
    expect(p).toContain(`${label} "c": max_concurrency must be a whole number from 1 to 1000000`);
    expect(p).toContain(`${label} "c": models must be a non-empty list of model names, or ["*"]`);
    expect(p.join("\n")).not.toContain('"k"');
  });

  test("accounts and GANTRY_UPSTREAM_URL together are refused", () => {
    const dir = dirWith(null);
    const p = problemsOf(() => loadConfig({ "data-dir": dir, "upstream-url": "https://one/v1" }, { GANTRY_UPSTREAMS: '[{"name":"a","url":"https://x/v1","key":"k"}]' }));
    expect(p).toHaveLength(1);
    expect(p[0]).toContain("are exclusive");
  });

  test("a key written inline in a world-readable gantry.toml refuses the start; key_env or a private file does not", () => {
    const inline = `[[upstreams]]\nname = "a"\nurl = "https://x/v1"\nkey = "sk-inline-secret-0123"\n`;
    const open = dirWith(inline, 0o644);
    const p = problemsOf(() => loadConfig({ "data-dir": open }, {}));
    expect(p).toHaveLength(1);
    expect(p[0]).toContain("holds an upstream key inline (account a) and is readable by every user");
    expect(p[0]).not.toContain("sk-inline-secret");
    expect(loadConfig({ "data-dir": dirWith(inline, 0o600) }, {}).upstreams[0]!.apiKey).toBe("sk-inline-secret-0123");
    expect(loadConfig({ "data-dir": dirWith(TOML, 0o644) }, { PRIMARY_KEY: "x", BACKUP_KEY: "y" }).upstreams).toHaveLength(2);
  });
});
