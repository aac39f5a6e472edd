/** RefusedParamRepository on SQLite: the `upstream_refused_params` table. */
import type { Database } from "bun:sqlite";
import type { RefusedParam, RefusedParamRepository } from "../../gateway/upstream/refused-params-repository";

export class SqliteRefusedParams implements RefusedParamRepository {
  private readonly select;
  private readonly insert;

  constructor(db: Database) {
    this.select = db.query("SELECT model, param FROM upstream_refused_params WHERE upstream = ?");
    this.insert = db.query("INSERT OR IGNORE INTO upstream_refused_params (upstream, model, param, learnt_at) VALUES (?, ?, ?, ?)");
  }

  async list(upstream: string): Promise<RefusedParam[]> {
    return this.select.all(upstream) as RefusedParam[];
  }

  async add(upstream: string, model: string, param: string, at: number): Promise<void> {
    this.insert.run(upstream, model, param, at);
  }
}
