/** What a feature's services are built from: the shared store handle, settings, logger and clock. */
import type { Database } from "bun:sqlite";
import type { Config } from "./config";
import type { Logger } from "./log";
import type { MetaStore } from "./store/sqlite/meta";

export interface ServiceContext {
  config: Config;
  db: Database;
  meta: MetaStore;
  log: Logger;
  now: () => number;
  fetch: typeof fetch;
}
