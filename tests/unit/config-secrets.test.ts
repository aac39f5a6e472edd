import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, describeConfig, loadConfig } from "../../src/config";
import { redact } from "../../src/redact";
import { displayPrefix, hashesEqual, newApiKeySecret, sha256Hex } from "../../src/secrets";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

describe("settings", () => {
  test("flag > environment > gantry.toml > default", () => {
    const dir = tempDir("cfg");
    writeFileSync(join(dir, "gantry.toml"), 'port = 9001\nlog_level = "warn"\nhost = "0.0.0.0"\n');
    const c = loadConfig({ "data-dir": dir, port: "9003" }, { GANTRY_PORT: "9002", GANTRY_LOG_LEVEL: "debug" });
    expect(c.port).toBe(9003);
    expect(c.logLevel).toBe("debug");
    expect(c.host).toBe("0.0.0.0");
    expect(c.upstreamRetries).toBe(0);
    const d = loadConfig({ "data-dir": dir }, {});
    expect(d.port).toBe(9001);
  });

  test("every problem is reported at once", () => {
    try {
      loadConfig({ port: "x", "log-level": "loud", "upstream-url": "ftp://x" }, {});
      throw new Error("should have failed");
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).message;
      expect(text).toContain("GANTRY_PORT");
      expect(text).toContain("--port");
    }
    expect(() => loadConfig({ "log-level": "loud" }, {})).toThrow(/GANTRY_LOG_LEVEL/);
    expect(() => loadConfig({ "upstream-url": "ftp://x" }, {})).toThrow(/GANTRY_UPSTREAM_URL/);
    expect(() => loadConfig({ port: "70000" }, {})).toThrow(/GANTRY_PORT/);
  });

  test("unknown keys in gantry.toml are refused", () => {
    const dir = tempDir("cfg");
    writeFileSync(join(dir, "gantry.toml"), "prot = 1\n");
    expect(() => loadConfig({ "data-dir": dir }, {})).toThrow(/unknown setting "prot"/);
  });

  test("secrets are redacted when settings are shown", () => {
    const c = loadConfig({ "upstream-key": "sk-live-0123456789abcdefghij", "admin-token": "gat-secret-token-value-xyz" }, {});
    const shown = JSON.stringify(describeConfig(c));
    expect(shown).not.toContain("0123456789abcdefghij");
    expect(shown).not.toContain("secret-token-value");
    expect(redact("short")).toBe("***(5 chars)");
  });
});

describe("secrets", () => {
  test("key secrets are long, random and shown by prefix only", () => {
    const a = newApiKeySecret();
    const b = newApiKeySecret();
    expect(a).not.toBe(b);
    expect(a.length).toBeGreaterThanOrEqual(3 + 32); // 192 bits of base64url
    expect(displayPrefix(a).length).toBeLessThan(12);
    expect(a.startsWith(displayPrefix(a))).toBe(true);
  });
  test("hash comparison", () => {
    expect(hashesEqual(sha256Hex("a"), sha256Hex("a"))).toBe(true);
    expect(hashesEqual(sha256Hex("a"), sha256Hex("b"))).toBe(false);
    expect(hashesEqual(sha256Hex("a"), "00")).toBe(false);
  });
});
