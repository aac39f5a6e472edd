/**
 * What every KeyRepository must do, written against the interface only: a backend's test file calls
 * `keyRepositoryConformance` with a way to open an empty repository (and the ledger that adds to its totals).
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { KeyFields, KeyRepository } from "../../src/gateway/keys/key-repository";
import type { LedgerEntry, UsageLedger } from "../../src/gateway/usage/ledger-repository";
import { recordedHistory } from "../../src/gateway/usage/limiter-history";
import { sha256Hex } from "../../src/secrets";

export interface KeyRepositoryFixture {
  keys: KeyRepository;
  /** The ledger of the same store: its rows advance the keys' totals. */
  ledger: UsageLedger;
  /** Moves the repository's clock (creation and reset times come from it). */
  setNow(ms: number): void;
  close(): Promise<void> | void;
}

const T0 = Date.parse("2026-06-01T00:00:00Z");

const EVERY_FIELD: Required<Omit<KeyFields, "name">> = {
  status: "disabled",
  notBefore: T0 - 1000,
  expiresAt: T0 + 86_400_000,
  modelMode: "allow",
  models: ["gpt-*", "demo-mini"],
  quotaTokens: 123_456,
  balance: 12.345678,
  rpm: 60,
  rpd: 1000,
  concurrency: 4,
  maxTokens: 2048,
};

function row(keyId: string, input: number, output: number, cost: number): LedgerEntry {
  return {
    ts: T0, requestId: `r-${Math.random()}`, keyId, model: "m", endpoint: "responses", status: 200, errorCode: null,
    inputTokens: input, outputTokens: output, reasoningTokens: 0, cachedTokens: 0, cost, durationMs: 5, upstreamTtfbMs: 2,
  };
}

export function keyRepositoryConformance(backend: string, make: () => Promise<KeyRepositoryFixture>): void {
  describe(`KeyRepository conformance: ${backend}`, () => {
    let fx: KeyRepositoryFixture | null = null;
    const open = async () => {
      fx = await make();
      fx.setNow(T0);
      return fx;
    };
    afterEach(async () => {
      await fx?.close();
      fx = null;
    });

    test("create stores every field and only the secret's hash; the secret is returned once", async () => {
      const { keys } = await open();
      const { key, secret } = await keys.create({ name: "alpha", ...EVERY_FIELD });
      expect(key).toMatchObject({ name: "alpha", ...EVERY_FIELD, createdAt: T0, updatedAt: T0 });
      expect(key.hash).toBe(sha256Hex(secret));
      expect(key.prefix.length).toBeGreaterThan(0);
      expect(secret.startsWith(key.prefix.replace(/…$/, ""))).toBe(true);
      expect(JSON.stringify(await keys.list())).not.toContain(secret);
      expect(await keys.get(key.id)).toEqual(key);
      expect(await keys.get("alpha")).toEqual(key);
    });

    test("getByHash finds a key by its secret's SHA-256; another hash finds nothing", async () => {
      const { keys } = await open();
      const { key, secret } = await keys.create({ name: "hashed" });
      expect(await keys.getByHash(sha256Hex(secret))).toEqual(key);
      expect(await keys.getByHash(sha256Hex(secret + "x"))).toBeNull();
      await keys.delete(key.id);
      expect(await keys.getByHash(sha256Hex(secret))).toBeNull();
    });

    test("a new key has no limits unless given, and zero usage", async () => {
      const { keys } = await open();
      const { key } = await keys.create({ name: "plain" });
      expect(key).toMatchObject({ status: "active", notBefore: null, expiresAt: null, modelMode: null, models: [], quotaTokens: null, balance: null, rpm: null, rpd: null, concurrency: null, maxTokens: null });
      expect(await keys.usage(key.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: null });
    });

    test("ids and secrets are unique; list is oldest first", async () => {
      const { keys, setNow } = await open();
      const made = [];
      for (let i = 0; i < 20; i++) {
        setNow(T0 + i);
        made.push(await keys.create({ name: `k${i}` }));
      }
      expect(new Set(made.map((m) => m.key.id)).size).toBe(20);
      expect(new Set(made.map((m) => m.secret)).size).toBe(20);
      expect((await keys.list()).map((k) => k.name)).toEqual(made.map((m) => m.key.name));
    });

    test("update changes only the fields given; null clears a limit", async () => {
      const { keys, setNow } = await open();
      const { key } = await keys.create({ name: "u", ...EVERY_FIELD });
      setNow(T0 + 5000);
      const updated = await keys.update(key.id, { rpm: null, models: ["x"], balance: 0.5, name: "renamed" });
      expect(updated).toMatchObject({ ...EVERY_FIELD, rpm: null, models: ["x"], balance: 0.5, name: "renamed", createdAt: T0, updatedAt: T0 + 5000 });
      expect(await keys.get("renamed")).toEqual(updated);
      expect(await keys.get("u")).toBeNull();
      expect(await keys.update("renamed", {})).toEqual(updated);
    });

    test("unknown ids and names: get and update give null, delete gives false", async () => {
      const { keys } = await open();
      expect(await keys.get("key_nope")).toBeNull();
      expect(await keys.update("key_nope", { rpm: 1 })).toBeNull();
      expect(await keys.delete("key_nope")).toBe(false);
      expect(await keys.usage("key_nope")).toMatchObject({ requests: 0, tokens: 0 });
    });

    test("delete removes the key and its totals; the others stay", async () => {
      const { keys } = await open();
      const a = (await keys.create({ name: "a" })).key;
      const b = (await keys.create({ name: "b" })).key;
      expect(await keys.delete("a")).toBe(true);
      expect(await keys.get(a.id)).toBeNull();
      expect((await keys.list()).map((k) => k.id)).toEqual([b.id]);
      expect([...(await keys.allUsage()).keys()]).toEqual([b.id]);
    });

    test("ledger rows advance their key's totals, exactly (tokens and money)", async () => {
      const { keys, ledger } = await open();
      const a = (await keys.create({ name: "a" })).key;
      const b = (await keys.create({ name: "b" })).key;
      await Promise.all([ledger.record(row(a.id, 10, 5, 0.1)), ledger.record(row(a.id, 20, 7, 0.2)), ledger.record(row(b.id, 1, 1, 0))]);
      await ledger.recordMany([row(a.id, 100, 50, 0.000001), row("key_deleted_meanwhile", 9, 9, 9)]);
      expect(await keys.usage(a.id)).toEqual({ requests: 3, inputTokens: 130, outputTokens: 62, tokens: 192, spent: 0.300001, resetAt: null });
      const all = await keys.allUsage();
      expect(all.get(a.id)).toEqual(await keys.usage(a.id));
      expect(all.get(b.id)).toMatchObject({ requests: 1, tokens: 2 });
    });

    test("a usage reset zeroes the totals and stamps the new period", async () => {
      const { keys, ledger, setNow } = await open();
      const a = (await keys.create({ name: "a" })).key;
      await ledger.record(row(a.id, 10, 5, 1));
      setNow(T0 + 60_000);
      await keys.resetUsage(a.id);
      expect(await keys.usage(a.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, tokens: 0, spent: 0, resetAt: T0 + 60_000 });
      await ledger.record(row(a.id, 1, 2, 0));
      expect(await keys.usage(a.id)).toMatchObject({ requests: 1, tokens: 3, resetAt: T0 + 60_000 });
    });

    test("the limiter's history of a key (Redis came back empty): its totals, and only its ledger rows since the day began", async () => {
      const { keys, ledger } = await open();
      const a = (await keys.create({ name: "a" })).key;
      const b = (await keys.create({ name: "b" })).key;
      const DAY = 86_400_000;
      const at = (ts: number, keyId: string, tokens: number) => ({ ...row(keyId, tokens, 0, 0.5), ts });
      // Two rows of the last day, one older, one of another key.
      await Promise.all([ledger.record(at(T0 - DAY - 1, a.id, 100)), ledger.record(at(T0 - DAY, a.id, 10)), ledger.record(at(T0 - 1, a.id, 1)), ledger.record(at(T0 - 5, b.id, 7))]);
      expect(await recordedHistory(keys, ledger).usage(a.id, T0 - DAY)).toEqual({ tokens: 111, spent: 1.5, requests: 2 });
      expect(await recordedHistory(keys, ledger).usage("key_none", T0 - DAY)).toEqual({ tokens: 0, spent: 0, requests: 0 });
    });
  });
}
