/** Settings problems: every one at once, each a sentence naming the setting (flag and environment name) and what it accepts. */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, checkServerFiles, defaultConfig, loadConfig } from "../../src/config";
import { isTrustedPeer, parseProxyRange } from "../../src/rules/ip-ranges";

const dir = mkdtempSync(join(tmpdir(), "gantry-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The problems loadConfig reports for these flags (and environment), or [] when it accepts them. */
function problems(flags: Record<string, string>, env: Record<string, string> = {}, checkFiles = false): string[] {
  try {
    loadConfig({ "data-dir": dir, ...flags }, env, { checkFiles });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

describe("settings problems", () => {
  test("four bad settings: four sentences, none of them TypeBox's", () => {
    const p = problems({ port: "abc", "log-level": "loud", "upstream-url": "ftp://x", prices: "{bad" });
    expect(p).toHaveLength(4);
    expect(p).toContain("--port (GANTRY_PORT): 'abc' is not a port number (0–65535; 0 picks a free port)");
    expect(p).toContain("--log-level (GANTRY_LOG_LEVEL): 'loud' is not one of debug, info, warn, error");
    expect(p).toContain("--upstream-url (GANTRY_UPSTREAM_URL): 'ftp://x' is not an http:// or https:// URL");
    expect(p.find((x) => x.startsWith("--prices (GANTRY_PRICES): not valid JSON ("))).toBeDefined();
    expect(p.join("\n")).not.toMatch(/union value|Expected (integer|string)/);
  });

  test("a value from the environment says so", () => {
    expect(problems({}, { GANTRY_PORT: "70000" })).toEqual([
      "--port (GANTRY_PORT, from the environment): '70000' is not a port number (0–65535; 0 picks a free port)",
    ]);
  });

  test("numbers, booleans and JSON shapes are described", () => {
    const p = problems({ "upstream-retries": "1.5", "metrics-public": "maybe", prices: '{"gpt-5":{"input":1}}', "keepalive-seconds": "0" });
    expect(p).toContain("--upstream-retries (GANTRY_UPSTREAM_RETRIES): '1.5' is not a whole number from 0 to 10");
    expect(p).toContain("--metrics-public (GANTRY_METRICS_PUBLIC): 'maybe' is not true or false (also: 1/0, yes/no, on/off)");
    expect(p).toContain("--keepalive-seconds (GANTRY_KEEPALIVE_SECONDS): '0' is not a whole number of seconds from 1 to 3600");
    const prices = p.find((x) => x.startsWith("--prices"))!;
    expect(prices).toContain('{"input": N, "output": N}');
    expect(prices).toContain("/gpt-5/output");
  });

  test("the message of one problem is one line", () => {
    expect(() => loadConfig({ "data-dir": dir, "log-level": "loud" }, {})).toThrow(/^invalid setting: --log-level \(GANTRY_LOG_LEVEL\): 'loud'/);
  });

  test("blank default instructions are refused (the upstream answers 400 to empty instructions)", () => {
    expect(problems({ "default-instructions": "  " })).toEqual([
      "--default-instructions (GANTRY_DEFAULT_INSTRUCTIONS): '  ' is not text that is not blank (the upstream refuses empty instructions)",
    ]);
    expect(problems({ "default-instructions": "Be terse." })).toEqual([]);
  });

  test("good values pass", () => {
    expect(problems({ port: "0", "upstream-url": "https://api.example.com/v1", prices: '{"gpt-5*":{"input":1.25,"output":10}}', "trusted-proxies": "10.0.0.0/8, ::1" })).toEqual([]);
  });
});

describe("model aliases (GANTRY_MODEL_ALIASES)", () => {
  test("a table of names and patterns to upstream models is taken as written", () => {
    const table = { "claude-opus-*": "gpt-5.4", "claude-sonnet-*": "gpt-5.2", "claude-haiku-4-5": "gpt-5-mini" };
    expect(loadConfig({ "data-dir": dir, "model-aliases": JSON.stringify(table) }, {}).modelAliases).toEqual(table);
    expect(loadConfig({ "data-dir": dir }, {}).modelAliases).toEqual({});
  });

  test("each bad entry is named: a name or target that is no model name, a target with *, a name written twice", () => {
    const p = problems({ "model-aliases": JSON.stringify({ "claude opus": "gpt-5.4", "claude-sonnet-*": "gpt-*", "claude-haiku-*": 5, "Claude-X": "a", "claude-x": "b", "gpt-ok": "../x" }) });
    expect(p).toEqual([
      '--model-aliases (GANTRY_MODEL_ALIASES): the name "claude opus" is not a model name (ASCII letters, digits, . _ - : / @ +, and * for any characters; at most 256)',
      '--model-aliases (GANTRY_MODEL_ALIASES): the target of "claude-sonnet-*", "gpt-*", is not a model name (ASCII letters, digits, . _ - : / @ +; no *)',
      '--model-aliases (GANTRY_MODEL_ALIASES): the target of "claude-haiku-*", 5, is not a model name (ASCII letters, digits, . _ - : / @ +; no *)',
      '--model-aliases (GANTRY_MODEL_ALIASES): "claude-x" and "Claude-X" are the same name (names are compared in lower case)',
      '--model-aliases (GANTRY_MODEL_ALIASES): the target of "gpt-ok", "../x", is not a model name (ASCII letters, digits, . _ - : / @ +; no *)',
    ]);
  });

  test("not an object: one sentence saying what the setting takes", () => {
    for (const value of ['["gpt-5.4"]', '"gpt-5.4"', "5"]) {
      const p = problems({ "model-aliases": value });
      expect(p).toHaveLength(1);
      expect(p[0]).toStartWith(`--model-aliases (GANTRY_MODEL_ALIASES): ${value} is not a JSON object of model name (or pattern with *) to upstream model name`);
    }
    expect(problems({ "model-aliases": "{bad" })[0]).toStartWith("--model-aliases (GANTRY_MODEL_ALIASES): not valid JSON (");
  });
});

describe("trusted proxies", () => {
  test("addresses and CIDR ranges, IPv4 and IPv6, are accepted", () => {
    for (const entry of ["10.0.0.1", "10.0.0.0/8", "0.0.0.0/0", "::1", "fd00::/8", "[::1]", "::ffff:10.0.0.1"]) {
      expect(parseProxyRange(entry)).not.toBeNull();
    }
    expect(problems({ "trusted-proxies": "10.0.0.0/8,192.168.1.10,fd00::/8" })).toEqual([]);
  });

  test("anything else is refused, entry by entry", () => {
    for (const entry of ["banana", "10.0.0.1/", "10.0.0.0/33", "::1/129", "1.2.3.4/8/9", "10.0.0.0/x", "300.0.0.1"]) {
      expect(parseProxyRange(entry)).toBeNull();
    }
    expect(problems({ "trusted-proxies": "banana, 10.0.0.1, 10.0.0.0/33" })).toEqual([
      "--trusted-proxies (GANTRY_TRUSTED_PROXIES): 'banana' is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8)",
      "--trusted-proxies (GANTRY_TRUSTED_PROXIES): '10.0.0.0/33' is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8)",
    ]);
  });

  test("what is accepted is what matches: the server uses the same parser", () => {
    expect(isTrustedPeer("10.1.2.3", ["10.0.0.0/8"])).toBe(true);
    expect(isTrustedPeer("11.1.2.3", ["10.0.0.0/8"])).toBe(false);
    // An empty prefix length once read as /0 (trust everyone); it is now no range at all.
    expect(isTrustedPeer("11.1.2.3", ["10.0.0.1/"])).toBe(false);
  });
});

describe("TLS files", () => {
  test("a missing or unreadable file is a settings problem naming its path", () => {
    const cert = join(dir, "cert.pem");
    const key = join(dir, "key.pem");
    writeFileSync(cert, "-----BEGIN CERTIFICATE-----\n");
    writeFileSync(key, "-----BEGIN PRIVATE KEY-----\n");
    expect(problems({ "tls-cert": cert, "tls-key": key }, {}, true)).toEqual([]);

    const missing = join(dir, "missing.pem");
    expect(problems({ "tls-cert": missing, "tls-key": dir }, {}, true)).toEqual([
      `--tls-cert (GANTRY_TLS_CERT): cannot read '${missing}' (no such file)`,
      `--tls-key (GANTRY_TLS_KEY): cannot read '${dir}' (it is a directory)`,
    ]);
    // Only the server reads them: other commands do not check.
    expect(problems({ "tls-cert": missing, "tls-key": key })).toEqual([]);
    expect(() => checkServerFiles(defaultConfig({ tlsCert: missing, tlsKey: key }))).toThrow(ConfigError);

    if (process.getuid?.() !== 0) {
      chmodSync(key, 0o000);
      expect(problems({ "tls-cert": cert, "tls-key": key }, {}, true)).toEqual([`--tls-key (GANTRY_TLS_KEY): cannot read '${key}' (permission denied)`]);
    }
  });
});
