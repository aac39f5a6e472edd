/**
 * Clients in PostgreSQL: a batch of reports is upserted into `clients` (one row per client id) in one
 * transaction, so a heartbeat is acknowledged only once it is committed, and a client reporting to several
 * instances is still one row. Nothing to fold (SQLite's journal exists for its page locality).
 */
import type { SQL } from "bun";
import type { ClientGroup, ClientReport, ClientRepository, FoldResult, OnlineSample } from "../../site/heartbeats/client-repository";
import { num } from "./db";

type Row = Record<string, unknown>;

export class PostgresClientRepository implements ClientRepository {
  constructor(private readonly sql: SQL) {}

  async append(reports: readonly ClientReport[]): Promise<void> {
    if (reports.length === 0) return;
    // Sorted by client id: two instances' batches lock shared rows in one order, so they never deadlock.
    const rows = [...reports]
      .sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0))
      .map((r) => ({
        client_id: r.clientId, first_seen: r.firstAt, last_seen: r.at, app: r.app, version: r.version, platform: r.platform,
        arch: r.arch, runtime: r.runtime, locale: r.locale, count: r.count,
      }));
    // A field not reported (NULL) keeps the stored value; a late report never overrides a newer one. Existing
    // clients are updated first (where NULL still means "not sent"), then new ones inserted. Two instances
    // inserting the same new client at once is the one case that reaches ON CONFLICT, where an empty field
    // counts as not sent.
    for (let i = 0; i < rows.length; i += 1000) {
      await this.sql`
        WITH x AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + 1000))}::text::jsonb) AS r(client_id text, first_seen bigint,
            last_seen bigint, app text, version text, platform text, arch text, runtime text, locale text, count bigint)
        ),
        updated AS (
          UPDATE clients c SET
            first_seen = LEAST(c.first_seen, x.first_seen),
            last_seen  = GREATEST(c.last_seen, x.last_seen),
            app        = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.app, c.app) ELSE c.app END,
            version    = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.version, c.version) ELSE c.version END,
            platform   = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.platform, c.platform) ELSE c.platform END,
            arch       = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.arch, c.arch) ELSE c.arch END,
            runtime    = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.runtime, c.runtime) ELSE c.runtime END,
            locale     = CASE WHEN x.last_seen >= c.last_seen THEN COALESCE(x.locale, c.locale) ELSE c.locale END,
            count      = c.count + x.count
          FROM x WHERE c.client_id = x.client_id
          RETURNING c.client_id
        )
        INSERT INTO clients (client_id, first_seen, last_seen, app, version, platform, arch, runtime, locale, count)
        SELECT client_id, first_seen, last_seen, COALESCE(app, ''), COALESCE(version, ''), COALESCE(platform, ''),
          COALESCE(arch, ''), COALESCE(runtime, ''), COALESCE(locale, ''), count
        FROM x WHERE client_id NOT IN (SELECT client_id FROM updated)
        ON CONFLICT (client_id) DO UPDATE SET
          first_seen = LEAST(clients.first_seen, excluded.first_seen),
          last_seen  = GREATEST(clients.last_seen, excluded.last_seen),
          app        = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.app <> '' THEN excluded.app ELSE clients.app END,
          version    = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.version <> '' THEN excluded.version ELSE clients.version END,
          platform   = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.platform <> '' THEN excluded.platform ELSE clients.platform END,
          arch       = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.arch <> '' THEN excluded.arch ELSE clients.arch END,
          runtime    = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.runtime <> '' THEN excluded.runtime ELSE clients.runtime END,
          locale     = CASE WHEN excluded.last_seen >= clients.last_seen AND excluded.locale <> '' THEN excluded.locale ELSE clients.locale END,
          count      = clients.count + excluded.count`;
    }
  }

  async fold(): Promise<FoldResult> {
    return { moved: 0, more: false };
  }

  async onlineCount(since: number): Promise<number> {
    const [r] = await this.sql`SELECT COUNT(*) AS n FROM clients WHERE last_seen >= ${since}`;
    return num(r.n);
  }

  async onlineGroups(since: number): Promise<ClientGroup[]> {
    const rows = await this.sql`
      SELECT app, version, platform, arch, runtime, locale, COUNT(*) AS clients FROM clients
      WHERE last_seen >= ${since} GROUP BY app, version, platform, arch, runtime, locale`;
    return rows.map((r: Row) => ({ ...(r as unknown as ClientGroup), clients: num(r.clients) }));
  }

  async reportedVersion(clientId: string): Promise<string | null> {
    const [r] = await this.sql`SELECT version FROM clients WHERE client_id = ${clientId}`;
    return (r?.version as string | undefined) || null;
  }

  async knownCount(): Promise<number> {
    const [r] = await this.sql`SELECT COUNT(*) AS n FROM clients`;
    return num(r.n);
  }

  async pruneClients(seenBefore: number): Promise<number> {
    return (await this.sql`DELETE FROM clients WHERE last_seen < ${seenBefore} RETURNING 1`).length;
  }

  async recordSamples(samples: readonly OnlineSample[]): Promise<void> {
    if (samples.length === 0) return;
    await this.sql`
      INSERT INTO online_series (minute, online)
      SELECT minute, online FROM jsonb_to_recordset(${JSON.stringify(samples)}::text::jsonb) AS x(minute bigint, online integer)
      ON CONFLICT (minute) DO UPDATE SET online = GREATEST(online_series.online, excluded.online)`;
  }

  async samples(from: number, toExclusive: number): Promise<OnlineSample[]> {
    const rows = await this.sql`SELECT minute, online FROM online_series WHERE minute >= ${from} AND minute < ${toExclusive} ORDER BY minute`;
    return rows.map((r: Row) => ({ minute: num(r.minute), online: num(r.online) }));
  }

  async pruneSeries(before: number): Promise<number> {
    return (await this.sql`DELETE FROM online_series WHERE minute < ${before} RETURNING 1`).length;
  }
}
