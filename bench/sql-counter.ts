/**
 * Preloaded into a Gantry process (`bun --preload bench/sql-counter.ts src/main.ts serve ...`) for the API-key
 * check scenario only: counts every SQL statement executed through bun:sqlite, by SQL text. On SIGUSR2 the
 * counts so far are written as JSON to $BENCH_SQL_COUNTS, so the bench can diff them around a load run.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";

const counts = new Map<string, number>();
const bump = (sql: string) => counts.set(sql, (counts.get(sql) ?? 0) + 1);
const WRAPPED = Symbol("bench-counted");
const METHODS = ["get", "all", "run", "values", "iterate", "raw"] as const;

function wrapStatement<T extends object>(stmt: T, sql: string): T {
  const s = stmt as any;
  if (!s || s[WRAPPED]) return stmt;
  s[WRAPPED] = true;
  const key = sql.replace(/\s+/g, " ").trim();
  for (const m of METHODS) {
    const original = s[m];
    if (typeof original !== "function") continue;
    s[m] = function (this: unknown, ...args: unknown[]) {
      bump(key);
      return original.apply(this, args);
    };
  }
  return stmt;
}

const proto = Database.prototype as any;
for (const name of ["query", "prepare"]) {
  const original = proto[name];
  proto[name] = function (this: Database, sql: string, ...rest: unknown[]) {
    return wrapStatement(original.call(this, sql, ...rest), sql);
  };
}
for (const name of ["run", "exec"]) {
  const original = proto[name];
  proto[name] = function (this: Database, sql: string, ...rest: unknown[]) {
    bump(String(sql).replace(/\s+/g, " ").trim());
    return original.call(this, sql, ...rest);
  };
}

process.on("SIGUSR2", () => {
  const file = process.env.BENCH_SQL_COUNTS;
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(counts)));
});
