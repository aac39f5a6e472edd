/**
 * The layout's rules, checked on the import graph (docs/architecture.md, "Dependencies"): state only behind
 * the store, one-way dependencies, a pure core, no cycles, one import style. A change that breaks one fails here
 * with the offending files named.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { folderCycles, importCycles, readImportGraph, runtimeClosure } from "../support/import-graph";

const ROOT = join(import.meta.dir, "../..");
const graph = readImportGraph(ROOT);

const FEATURES = /^src\/(gateway|site|admin|portal|cli)\//;
const COMPOSITION = new Set(["src/deps.ts", "src/app.ts", "src/server.ts", "src/main.ts", "src/service-context.ts"]);
/** Modules every layer may use: they hold no state and know no feature. */
const SHARED = new Set(["src/secrets.ts", "src/errors.ts", "src/log.ts", "src/version.ts"]);
/** Where a feature declares the interface of its state: types, and the errors an implementation throws. */
const PORT = /(-repository\.ts|^src\/site\/releases\/mirror\.ts|^src\/gateway\/limits\/limiter-store\.ts|^src\/site\/heartbeats\/heartbeat-limit-store\.ts|^src\/admin\/admin-session-store\.ts|^src\/gateway\/upstream\/pool-port\.ts)$/;

/**
 * The pure core: values in, values out; no framework, no database, no network, no clock. Purity is a property of
 * a folder, never of a file: `gateway/wire/`, `gateway/translate/` and every folder named `rules/` (a feature's
 * maths and document builders, beside the runtime code that uses them) hold only pure code, so a file added
 * there is held to the rule without being listed anywhere.
 */
const isPure = (f: string) => /^src\/gateway\/(wire|translate)\//.test(f) || /^src\/(.+\/)?rules\//.test(f);
const PURE = graph.files.filter(isPure);
/** The pure folders there must be: a rename that empties one would otherwise silently exempt its code. */
const PURE_FOLDERS = [
  "src/gateway/wire/",
  "src/gateway/translate/",
  "src/gateway/limits/rules/",
  "src/gateway/upstream/rules/",
  "src/site/releases/rules/",
  "src/site/protocols/rules/",
  "src/site/protocols/electron/rules/",
  "src/site/protocols/tauri/rules/",
  "src/site/protocols/squirrel/rules/",
  "src/site/protocols/sparkle/rules/",
  "src/site/protocols/velopack/rules/",
  "src/site/downloads/rules/",
  "src/site/fetch/rules/",
  "src/site/announcements/rules/",
  "src/site/heartbeats/rules/",
  "src/site/http/rules/",
  "src/http/rules/",
  "src/rules/",
];
const IMPURE_PACKAGES = /^(elysia|@elysiajs\/|bun:sqlite$|bun$|node:fs|node:child_process|node:net)/;

/**
 * Known violations still to be moved. Empty now; an entry may only be removed: a new violation fails, and so
 * does an entry that no longer happens.
 */
const REMAINING = new Set<string>([]);

/** Fails on a violation not in REMAINING, and on an entry of REMAINING this rule no longer finds. */
function expectOnlyRemaining(found: string[], rule: RegExp): void {
  expect(found.filter((v) => !REMAINING.has(v))).toEqual([]);
  const stale = [...REMAINING].filter((v) => rule.test(v) && !found.includes(v));
  expect(stale).toEqual([]);
}

const isRoute = (f: string) => /^src\/gateway\/routes\//.test(f) || /^src\/gateway\/dialects\/[^/]+\/[^/]*-route\.ts$/.test(f) || /-routes\.ts$/.test(f) || /^src\/admin\/[^/]*-api\.ts$/.test(f) || f === "src/portal/routes.ts";

describe("layout", () => {
  test("bun:sqlite is imported only by the SQLite implementations", () => {
    const users = graph.files.filter((f) => graph.packages.get(f)!.has("bun:sqlite") || /from "bun:sqlite"/.test(graph.source.get(f)!));
    expectOnlyRemaining(users.filter((f) => !f.startsWith("src/store/sqlite/")).map((f) => `bun:sqlite in ${f}`), /^bun:sqlite in /);
  });

  test("store/ imports no feature code: only the interfaces it implements (and the errors they declare)", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/store/") && !e.to.startsWith("src/store/") && !e.to.startsWith("src/state/") && !SHARED.has(e.to) && !PORT.test(e.to));
    expectOnlyRemaining(bad.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`), /^src\/store\//);
  });

  test("http/ imports no feature and not the composition root", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/http/") && (FEATURES.test(e.to) || COMPOSITION.has(e.to)));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("features take narrow dependencies: none imports the composition root (the CLI, a shell, may)", () => {
    const bad = graph.edges.filter((e) => /^src\/(gateway|site|admin|portal)\//.test(e.from) && COMPOSITION.has(e.to) && e.to !== "src/service-context.ts");
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("a route never imports another route", () => {
    const bad = graph.edges.filter((e) => isRoute(e.from) && isRoute(e.to));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("the pure core imports no framework, database or file system and reads no clock", () => {
    const missing = PURE_FOLDERS.filter((d) => !existsSync(join(ROOT, d)) || !PURE.some((f) => f.startsWith(d)));
    expect(missing).toEqual([]);
    const bad: string[] = [];
    for (const f of PURE) {
      for (const p of graph.packages.get(f) ?? []) if (IMPURE_PACKAGES.test(p)) bad.push(`${f} imports ${p}`);
      const text = graph.source.get(f)!;
      if (/\bDate\.now\(|new Date\(\)|performance\.now\(/.test(text)) bad.push(`${f} reads the clock`);
      if (/\bfetch\(/.test(text)) bad.push(`${f} calls fetch`);
      for (const e of graph.edges) if (e.from === f && !e.typeOnly && !isPure(e.to) && !SHARED.has(e.to) && !PORT.test(e.to) && !e.to.endsWith("-types.ts") && !e.to.endsWith("/types.ts")) bad.push(`${f} -> ${e.to}`);
    }
    expectOnlyRemaining(bad, /^src\/(gateway|site)\//);
  });

  test("translate/ and wire/ depend one way: translation uses the wire code, the wire code knows no dialect", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/gateway/wire/") && e.to.startsWith("src/gateway/translate/"));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("pipeline/ knows nothing of the gateway but the wire code: the settlement it needs is an interface it declares", () => {
    const allowed = (to: string) => to.startsWith("src/gateway/pipeline/") || to.startsWith("src/gateway/wire/") || !to.startsWith("src/gateway/");
    const bad = graph.edges.filter((e) => e.from.startsWith("src/gateway/pipeline/") && !allowed(e.to));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("a dialect uses the exchange's interfaces only (its route alone runs the exchange), and no other dialect", () => {
    const dialectOf = (f: string) => /^src\/gateway\/dialects\/([^/]+)\//.exec(f)?.[1] ?? null;
    const bad = graph.edges.filter((e) => {
      const from = dialectOf(e.from);
      if (from === null) return false;
      const to = dialectOf(e.to);
      if (to !== null) return to !== from;
      if (!e.to.startsWith("src/gateway/exchange/")) return false;
      return e.to !== "src/gateway/exchange/dialect.ts" && !(isRoute(e.from) && e.to === "src/gateway/exchange/exchange.ts");
    });
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("the exchange names no dialect: a new one is a folder, not an edit of the exchange", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/gateway/exchange/") && e.to.startsWith("src/gateway/dialects/"));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("no import cycles", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  test("one import style: relative specifiers without the .ts extension", () => {
    const bad = graph.files.filter((f) => /from\s+["']\.{1,2}\/[^"']+\.ts["']/.test(graph.source.get(f)!));
    expect(bad).toEqual([]);
  });
});

/** The backends: each speaks to one kind of storage and classifies its own driver's errors. */
const BACKEND = /^src\/store\/(sqlite|postgres|redis|s3|files)\//;

describe("layout: state seams and backends", () => {
  test("a seam of src/state/ imports no backend and no feature", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/state/") && (e.to.startsWith("src/store/") || FEATURES.test(e.to) || COMPOSITION.has(e.to)));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("a gateway route loads neither PostgreSQL nor Redis: only the backend in use is loaded", () => {
    const routes = graph.files.filter((f) => f.startsWith("src/gateway/routes/"));
    expect(routes.length).toBeGreaterThan(0);
    const reached = [...runtimeClosure(graph, routes)].filter((f) => /^src\/store\/(postgres|redis)\//.test(f));
    expect(reached).toEqual([]);
  });

  test("no two folders of the store and the seams import each other", () => {
    expect(folderCycles(graph, (d) => d === "src/state" || d.startsWith("src/store"))).toEqual([]);
  });

  test("the shared row mappings (store/rows/) import no backend", () => {
    const bad = graph.edges.filter((e) => e.from.startsWith("src/store/rows/") && BACKEND.test(e.to));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("one backend does not import another", () => {
    const name = (f: string) => BACKEND.exec(f)?.[1];
    const bad = graph.edges.filter((e) => name(e.from) && name(e.to) && name(e.from) !== name(e.to) && name(e.to) !== "files");
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });
});

describe("domain code at home", () => {
  test("the CLI and the portal import nothing of the back office: rules they share with it live in their feature", () => {
    const bad = graph.edges.filter((e) => /^src\/(cli|portal)\//.test(e.from) && e.to.startsWith("src/admin/"));
    expect(bad.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("the root of site/ holds only what spans its features; everything else is in a feature folder or site/http/", () => {
    const SITE_ROOT = ["src/site/routes.ts", "src/site/site-documents.ts", "src/site/engagement-services.ts"];
    const loose = graph.files.filter((f) => /^src\/site\/[^/]+\.ts$/.test(f) && !SITE_ROOT.includes(f));
    expect(loose).toEqual([]);
  });

  test("no feature's port is kept in http/: it takes narrow interfaces, the ports live in their features", () => {
    const bad = graph.files.filter((f) => f.startsWith("src/http/") && (/-(store|repository)\.ts$/.test(f) || PORT.test(f)));
    expect(bad).toEqual([]);
  });
});

/** Modules every layer builds on: the settings, the error table, the logger. They import no feature, no state
 *  backend and not the composition root, so any feature (and any test) can load them alone. */
const LEAVES = ["src/config.ts", "src/errors.ts", "src/log.ts"];

describe("leaves", () => {
  test("config.ts, errors.ts and log.ts import no feature, no store or seam, nothing of http/ and not the composition root", () => {
    const bad = graph.edges.filter((e) => LEAVES.includes(e.from) && (FEATURES.test(e.to) || /^src\/(store|state|http)\//.test(e.to) || COMPOSITION.has(e.to)));
    expect(bad.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`)).toEqual([]);
  });
});

describe("request state", () => {
  test("what is kept per request lives in http/request-state.ts: no other WeakMap keyed by Request, no symbol on a Request", () => {
    const bad = graph.files.filter((f) => {
      if (f === "src/http/request-state.ts") return false;
      const text = graph.source.get(f)!;
      return /new WeakMap<\s*Request\b/.test(text) || /as unknown as Record<symbol/.test(text);
    });
    expect(bad).toEqual([]);
  });
});

/**
 * The root of src/ is left out: it is the composition root (which imports every feature) and the leaves (which
 * every feature imports), held by their own rules above. Type-only imports count: a type both sides need belongs
 * to the folder that owns it, or the lower folder declares the small interface it needs.
 */
const inFolderScope = (folder: string) => folder.startsWith("src/");

describe("no two folders import each other", () => {
  test("folders of src/ depend one way (type-only imports included)", () => {
    expect(folderCycles(graph, inFolderScope)).toEqual([]);
  });
});
