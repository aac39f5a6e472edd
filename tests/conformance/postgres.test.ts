/**
 * The conformance suites against PostgreSQL: a real server (Debian's) started for this process, a fresh
 * database per fixture. Without PostgreSQL installed, one skipped test says so (CI installs it).
 */
import { SQL } from "bun";
import { describe, expect, test } from "bun:test";
import { PostgresAnnouncementRepository } from "../../src/store/postgres/announcements";
import { PostgresChangeFeed } from "../../src/store/postgres/change-feed";
import { PostgresClientRepository } from "../../src/store/postgres/clients";
import { PostgresDownloadRepository } from "../../src/store/postgres/downloads";
import { PostgresReleaseRepository } from "../../src/store/postgres/releases";
import { openPostgres } from "../../src/store/postgres/db";
import { PostgresKeyRepository } from "../../src/store/postgres/keys";
import { PostgresUsageLedger } from "../../src/store/postgres/ledger";
import { PostgresMetaRepository } from "../../src/store/postgres/meta";
import type { ChangeTopic } from "../../src/state/change-feed";
import { freshDatabase, postgresUnavailable } from "../support/postgres";
import { changeFeedConformance } from "./change-feed.suite";
import { engagementRepositoriesConformance } from "./engagement-repositories.suite";
import { keyRepositoryConformance } from "./key-repository.suite";
import { metaRepositoryConformance } from "./meta-repository.suite";
import { releaseRepositoryConformance } from "./release-repository.suite";
import { usageLedgerConformance } from "./usage-ledger.suite";
import { storedResponsesConformance } from "./stored-responses.suite";
import { PostgresStoredResponses } from "../../src/store/postgres/stored-responses";
import { PostgresRefusedParams } from "../../src/store/postgres/refused-params";
import { refusedParamsConformance } from "./refused-params.suite";

const unavailable = postgresUnavailable();

if (unavailable) {
  console.warn(`PostgreSQL conformance suites skipped: ${unavailable}`);
  test.skip(`PostgreSQL conformance suites: ${unavailable}`, () => {});
} else {
  /** Two pools on one fresh database (as two processes would have), dropped on close. */
  async function pair() {
    const db = await freshDatabase();
    const mine = await openPostgres(db.url, { max: 4 });
    const other = await openPostgres(db.url, { max: 2 });
    return {
      mine,
      other,
      async close() {
        await Promise.all([mine.close(), other.close()]);
        await db.drop();
      },
    };
  }

  storedResponsesConformance("PostgreSQL", async () => {
    const p = await pair();
    return {
      repo: new PostgresStoredResponses(p.mine),
      itemRows: async () => Number((await p.mine`SELECT count(*) AS n FROM stored_items`)[0].n),
      close: p.close,
    };
  });

  refusedParamsConformance("PostgreSQL", async () => {
    const p = await pair();
    return { repo: new PostgresRefusedParams(p.mine), other: new PostgresRefusedParams(p.other), close: p.close };
  });

  metaRepositoryConformance("PostgreSQL", async () => {
    const p = await pair();
    return { meta: new PostgresMetaRepository(p.mine), other: new PostgresMetaRepository(p.other), close: p.close };
  });

  /**
   * A committed change made through the other pool, through the topic's table: the triggers announce it.
   */
  const CHANGE: Record<ChangeTopic, (sql: SQL) => Promise<unknown>> = {
    keys: (sql) => new PostgresKeyRepository(sql).create({ name: `k-${crypto.randomUUID()}` }),
    releases: (sql) => new PostgresReleaseRepository(sql, Date.now).create({ version: `1.0.${Math.floor(Math.random() * 1e9)}`, publishedAt: "2026-01-01T00:00:00Z" }),
    announcements: (sql) => sql`INSERT INTO announcements (title, created_at, updated_at) VALUES ('elsewhere', 0, 0)`,
  };

  changeFeedConformance("PostgreSQL (LISTEN/NOTIFY)", async () => {
    const p = await pair();
    const feed = new PostgresChangeFeed(p.mine);
    await feed.start();
    return {
      feed,
      changeElsewhere: async (topic) => void (await CHANGE[topic](p.other)),
      close: p.close,
    };
  });

  keyRepositoryConformance("PostgreSQL", async () => {
    const p = await pair();
    let now = 0;
    const ledger = new PostgresUsageLedger(p.mine);
    return {
      keys: new PostgresKeyRepository(p.mine, () => now),
      ledger,
      setNow(ms) {
        now = ms;
      },
      async close() {
        await ledger.close();
        await p.close();
      },
    };
  });

  usageLedgerConformance("PostgreSQL", async () => {
    const p = await pair();
    const ledger = new PostgresUsageLedger(p.mine);
    return {
      ledger,
      async close() {
        await ledger.close();
        await p.close();
      },
    };
  });

  engagementRepositoriesConformance("PostgreSQL", async () => {
    const p = await pair();
    let touched = 0;
    return {
      announcements: new PostgresAnnouncementRepository(p.mine, () => touched++),
      clients: new PostgresClientRepository(p.mine),
      announcementChanges: () => touched,
      close: p.close,
    };
  });

  releaseRepositoryConformance("PostgreSQL", async () => {
    const p = await pair();
    let touched = 0;
    return {
      releases: new PostgresReleaseRepository(p.mine, () => 1000, () => touched++),
      downloads: new PostgresDownloadRepository(p.mine),
      changes: () => touched,
      close: p.close,
    };
  });

  describe("PostgreSQL connection loss", () => {
    const entry = (requestId: string, keyId: string) => ({
      ts: 1000, requestId, keyId, model: "m", endpoint: "responses", status: 200, errorCode: null,
      inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0, cost: 0, durationMs: 1, upstreamTtfbMs: null,
    });
    /** Cuts every connection of `mine` (what a restart or a failover does to idle pooled connections). */
    async function cutAll(other: SQL): Promise<number> {
      const [row] = await other`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                                WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      return row.n;
    }

    test("statements, unsafe statements and transactions on connections cut while idle succeed (tried once more)", async () => {
      const p = await pair();
      try {
        await Promise.all([p.mine`SELECT 1`, p.mine`SELECT 2`, p.mine`SELECT 3`]);
        expect(await cutAll(p.other)).toBeGreaterThan(0);
        const [a] = await p.mine`SELECT 41 + 1 AS n`;
        expect(a.n).toBe(42);
        await cutAll(p.other);
        const [b] = await p.mine.unsafe("SELECT $1::int AS n", [7]);
        expect(b.n).toBe(7);
        await cutAll(p.other);
        const c = await p.mine.begin(async (tx) => (await tx`SELECT 5 AS n`)[0].n);
        expect(c).toBe(5);
        // Errors that are not a lost connection are not retried.
        await expect(p.mine`SELECT * FROM no_such_table`).rejects.toThrow(/no_such_table/);
      } finally {
        await p.close();
      }
    });

    test("a ledger batch written twice (a retry after its commit landed) counts each request once", async () => {
      const p = await pair();
      const keys = new PostgresKeyRepository(p.mine);
      const ledger = new PostgresUsageLedger(p.mine);
      try {
        const { key } = await keys.create({ name: "retry" });
        const batch = [entry("req_retry_1", key.id), entry("req_retry_2", key.id)];
        await ledger.recordMany(batch);
        await ledger.recordMany(batch);
        await ledger.recordMany([entry("req_retry_3", key.id)]);
        expect((await keys.usage(key.id)).requests).toBe(3);
        const [row] = await p.other`SELECT count(*)::int AS n FROM usage_ledger`;
        expect(row.n).toBe(3);
      } finally {
        await ledger.close();
        await p.close();
      }
    });
  });
}
