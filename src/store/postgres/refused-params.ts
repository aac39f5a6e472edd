/** RefusedParamRepository on PostgreSQL: the `upstream_refused_params` table. */
import type { SQL } from "bun";
import type { RefusedParam, RefusedParamRepository } from "../../gateway/upstream/refused-params-repository";

export class PostgresRefusedParams implements RefusedParamRepository {
  constructor(private readonly sql: SQL) {}

  async list(upstream: string): Promise<RefusedParam[]> {
    const rows = await this.sql`SELECT model, param FROM upstream_refused_params WHERE upstream = ${upstream}`;
    return rows.map((r: { model: string; param: string }) => ({ model: r.model, param: r.param }));
  }

  async add(upstream: string, model: string, param: string, at: number): Promise<void> {
    await this.sql`INSERT INTO upstream_refused_params (upstream, model, param, learnt_at) VALUES (${upstream}, ${model}, ${param}, ${at})
      ON CONFLICT (upstream, model, param) DO NOTHING`;
  }
}
