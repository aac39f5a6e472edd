/**
 * Each table's row mapping is written once (src/store/rows/) and read through each backend's column codec: the
 * same record, as SQLite returns it (numbers, flags 0/1) and as PostgreSQL does (BIGINT as strings, booleans),
 * maps to the same domain value.
 */
import { describe, expect, test } from "bun:test";
import { announcementColumns, announcementFromRow } from "../../src/store/rows/announcements";
import { keyFromRow, usageTotalsFromRow } from "../../src/store/rows/keys";
import { assetFromRow, releaseFromRow } from "../../src/store/rows/releases";
import { storedResponseFromRow } from "../../src/store/rows/stored-responses";
import { leaseHeldByOther, leaseKey } from "../../src/store/rows/leases";
import { processTag } from "../../src/state/process-owner";
import { sqliteColumns } from "../../src/store/sqlite/columns";
import { postgresColumns } from "../../src/store/postgres/columns";

/** The PostgreSQL form of a SQLite row: numbers as the strings BIGINT arrives as, the named flags as booleans. */
function asPostgres(row: Record<string, unknown>, flags: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = flags.includes(k) ? v === 1 : typeof v === "number" ? String(v) : v;
  return out;
}

describe("row mappings shared by the SQLite and PostgreSQL repositories", () => {
  test("api_keys and key_usage", () => {
    const row = { id: "key_1", name: "a", prefix: "gk_ab", hash: "h", status: "active", not_before: null, expires_at: 2000, model_mode: "allow", models: '["gpt-*"]', quota_tokens: 10, balance_micros: 2_500_000, rpm: null, rpd: 5, concurrency: 2, max_tokens: null, created_at: 1, updated_at: 3 };
    const key = keyFromRow(row, sqliteColumns);
    expect(key).toMatchObject({ id: "key_1", notBefore: null, expiresAt: 2000, models: ["gpt-*"], balance: 2.5, rpd: 5, createdAt: 1, updatedAt: 3 });
    expect(keyFromRow(asPostgres(row, []), postgresColumns)).toEqual(key);
    expect(keyFromRow({ ...row, balance_micros: null }, sqliteColumns).balance).toBeNull();
    const usage = { requests: 4, input_tokens: 10, output_tokens: 5, spent_micros: 1_500_000, reset_at: null };
    expect(usageTotalsFromRow(usage, sqliteColumns)).toEqual({ requests: 4, inputTokens: 10, outputTokens: 5, tokens: 15, spent: 1.5, resetAt: null });
    expect(usageTotalsFromRow(asPostgres(usage, []), postgresColumns)).toEqual(usageTotalsFromRow(usage, sqliteColumns));
  });

  test("releases and release_assets", () => {
    const asset = { id: 7, release_id: 3, name: "app.zip", platform: "mac", arch: "arm64", file_type: "zip", classified_by_operator: 1, sha256: "s", sha512: null, sha1: null, size: 42, mirrored: 0, upstream_url: null, remote_id: 9, remote_api_url: null, remote_updated_at: null, remote_digest: null, remote_size: null, mirror_error: null, mirror_pending: 1, signature: null, signature_url: null, signature_api_url: null, created_at: 1, updated_at: 2, downloads: 5 };
    const a = assetFromRow(asset, sqliteColumns);
    expect(a).toMatchObject({ id: 7, releaseId: 3, sha512: "", sha1: "", size: 42, mirrored: false, classifiedByOperator: true, mirrorPending: true, downloads: 5, remoteId: 9 });
    expect(assetFromRow(asPostgres(asset, ["classified_by_operator", "mirrored", "mirror_pending"]), postgresColumns)).toEqual(a);
    const release = { id: 3, version: "1.2.0", notes: "n", published_at: "2026-01-01", min_app_version: "", prerelease: 0, rollout_percent: 50, rollout_paused: 1, yanked: 0, origin: "github", remote_id: null, created_at: 1, updated_at: 2 };
    const r = releaseFromRow(release, sqliteColumns, [a]);
    expect(r).toMatchObject({ id: 3, prerelease: false, rolloutPercent: 50, rolloutPaused: true, yanked: false, remoteId: null, assets: [a] });
    expect(releaseFromRow(asPostgres(release, ["prerelease", "rollout_paused", "yanked"]), postgresColumns, [a])).toEqual(r);
  });

  test("announcements, read and written", () => {
    const row = { id: 2, type: "news", display_type: "banner", target_surface: "app", level: "info", title: "t", body: "b", cta_text: "", cta_url: "", min_version: "", max_version: "", start_at: "", expires_at: "", dismiss_key: "d", test_only: 1, app: "", locales: '{"de":{"title":"T"}}', created_at: 1, updated_at: 2 };
    const a = announcementFromRow(row, sqliteColumns);
    expect(a).toMatchObject({ id: 2, testOnly: true, locales: { de: { title: "T" } } });
    expect(announcementFromRow(asPostgres(row, ["test_only"]), postgresColumns)).toEqual(a);
    // A hand-edited row loses its translations, not the endpoint.
    expect(announcementFromRow({ ...row, locales: "{" }, sqliteColumns).locales).toEqual({});
    expect(announcementColumns(a, sqliteColumns).test_only).toBe(1);
    expect(announcementColumns(a, postgresColumns).test_only).toBe(true);
    expect(announcementColumns(a, sqliteColumns).locales).toBe(row.locales);
  });

  test("stored_responses", () => {
    const row = { id: "resp_1", key_id: "key_1", previous_id: null, model: "m", account: "primary", created_at: 1, expires_at: 9, response: '{"id":"resp_1"}', input_items: "[]", bytes: 30 };
    const r = storedResponseFromRow(row, sqliteColumns);
    expect(r).toEqual({ id: "resp_1", keyId: "key_1", previousId: null, model: "m", account: "primary", createdAt: 1, expiresAt: 9, response: { id: "resp_1" }, inputItems: [], bytes: 30 });
    expect(storedResponseFromRow(asPostgres(row, []), postgresColumns)).toEqual(r);
    // Rows kept before accounts were recorded (and by a single upstream) name none.
    const { account: _, ...older } = row;
    expect(storedResponseFromRow(older, sqliteColumns).account).toBeNull();
  });

  test("a lease in meta: held only by another live owner before its expiry", () => {
    expect(leaseKey("sync")).toBe("lease:sync");
    const other = `${processTag()}-other`;
    const held = (owner: string, until: number) => JSON.stringify({ owner, until });
    expect(leaseHeldByOther(held(other, 100), "me", 50)).toBe(true);
    expect(leaseHeldByOther(held(other, 100), "me", 100)).toBe(false);
    expect(leaseHeldByOther(held("me", 100), "me", 50)).toBe(false);
    expect(leaseHeldByOther("{not json", "me", 50)).toBe(false);
    // A holder of this host whose process is gone cannot renew it.
    expect(leaseHeldByOther(held(`${processTag(2 ** 22 + 1)}-sync`, 100), "me", 50)).toBe(false);
  });
});
