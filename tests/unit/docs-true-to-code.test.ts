/**
 * The documentation may not drift from the code: every setting, command, CLI option and HTTP route the code has is
 * in docs/operator.md, every route the docs name exists, and every document the README and docs/ point to is in the
 * repository. When this fails, fix the docs (or the code), not the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createApp } from "../../src/app";
import { SETTINGS, defaultConfig } from "../../src/config";
import { createDeps, type AppDeps } from "../../src/deps";
import { silentLogger } from "../../src/log";
import { ENTRIES } from "../../src/cli/entries";

const ROOT = resolve(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const OPERATOR = read("docs/operator.md");
const DOC_FILES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/**
 * Documents another branch adds (docs/admin-api-keys.md comes with the admin keys input checks). A name here may be
 * linked before the file exists; delete it from this set once the file is in the repository.
 */
const PENDING_DOCS = new Set<string>();

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** `text` contains `token` not followed by more of a name (`--test` must not be found inside `--test-only`). */
const mentions = (text: string, token: string) => new RegExp(`${escape(token)}(?![\\w-])`).test(text);

describe("settings", () => {
  test("every setting has a row in docs/operator.md with its env, flag and default", () => {
    const rows = OPERATOR.split("\n").filter((l) => l.startsWith("|"));
    const missing: string[] = [];
    for (const s of SETTINGS) {
      const row = rows.find((r) => r.includes(`\`${s.env}\``) && r.includes(`\`--${s.flag}\``));
      if (!row) {
        missing.push(`${s.env} / --${s.flag}: no table row`);
        continue;
      }
      const d = s.default;
      const shown = typeof d === "string" ? d : Array.isArray(d) ? (d.length ? d.join(",") : "") : typeof d === "object" ? JSON.stringify(d) : String(d);
      if (shown !== "" && !row.includes(`\`${shown}\``)) missing.push(`${s.env}: default \`${shown}\` not in its row`);
    }
    expect(missing).toEqual([]);
  });
});

describe("commands", () => {
  // The CLI's own command table: what `gantry --help` lists is what the operator reference must list.
  const commands = ENTRIES.flatMap((e) => ("commands" in e ? e.commands : [e]));

  test("every command and subcommand (src/cli/entries.ts) is documented as `gantry <command>`", () => {
    expect(commands.length).toBeGreaterThanOrEqual(30);
    expect(commands.map((c) => `gantry ${c.name}`).filter((c) => !mentions(OPERATOR, c))).toEqual([]);
  });

  test("every option and every setting flag a command takes is documented", () => {
    const flags = new Set<string>();
    for (const c of commands) for (const o of [...Object.keys(c.options ?? {}), ...c.settings]) flags.add(`--${o}`);
    expect(flags.size).toBeGreaterThanOrEqual(40);
    expect([...flags].filter((o) => !mentions(OPERATOR, o))).toEqual([]);
  });
});

describe("HTTP routes", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "gantry-docs-test-"));
  let deps: AppDeps;
  let routes: Array<{ method: string; path: string }> = [];
  beforeAll(async () => {
    deps = await createDeps(defaultConfig({ dataDir }), { databasePath: ":memory:", log: silentLogger });
    routes = createApp(deps).routes.map((r) => ({
      method: r.method.toUpperCase(),
      path: r.path.length > 1 ? r.path.replace(/\/+$/, "") : r.path,
    }));
  });
  afterAll(async () => {
    await deps.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the app's route table is read", () => {
    expect(routes.length).toBeGreaterThanOrEqual(50);
  });

  test("every route registered in the app is in docs/operator.md as `METHOD /path`", () => {
    const missing = routes
      .filter(({ method, path }) => {
        // A route for every method (`all`) is documented by its GET.
        const shown = method === "ALL" ? "GET" : method;
        return !OPERATOR.includes(`\`${shown} ${path}\``);
      })
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });

  test("every `METHOD /path` named in the operator reference and the contract is a route of the app", () => {
    const served = (method: string, path: string) =>
      routes.some((r) => r.path === path && (r.method === method || r.method === "ALL" || (method === "HEAD" && r.method === "GET")));
    const unknown: string[] = [];
    for (const file of ["docs/operator.md", "docs/contract.md"]) {
      for (const m of read(file).matchAll(/`(GET|HEAD|POST|PUT|PATCH|DELETE) (\/[^`\s?]*)[^`]*`/g)) {
        const path = m[2].replace(/\{(\w+)\}/g, ":$1");
        if (!served(m[1], path)) unknown.push(`${file}: ${m[1]} ${m[2]}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});

describe("links and document mentions", () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
  const anchorsOf = (markdown: string) =>
    new Set(
      [...markdown.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
        m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"),
      ),
    );
  const exists = (repoPath: string) => existsSync(join(ROOT, repoPath)) || PENDING_DOCS.has(repoPath);

  test("every relative link in README.md and docs/*.md points to an existing file (and heading)", () => {
    const broken: string[] = [];
    for (const file of DOC_FILES) {
      const text = read(file).replace(/```[\s\S]*?```/g, "");
      for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split("#");
        const repoPath = path === "" ? file : relative(ROOT, resolve(ROOT, dirname(file), path));
        if (!exists(repoPath)) {
          broken.push(`${file}: ${target} (no ${repoPath})`);
          continue;
        }
        if (anchor && repoPath.endsWith(".md") && existsSync(join(ROOT, repoPath)) && !anchorsOf(read(repoPath)).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${repoPath})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  test("every .md document named in README.md and docs/*.md is in the repository", () => {
    const missing: string[] = [];
    for (const file of DOC_FILES) {
      for (const m of read(file).matchAll(/(?<![\w./-])((?:\.\.?\/)?[\w./-]*[\w-]\.md)(?![\w-])/g)) {
        const name = m[1];
        const candidates = [relative(ROOT, resolve(ROOT, dirname(file), name)), relative(ROOT, resolve(ROOT, name))];
        if (!candidates.some(exists)) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test("no shell line in the README or docs needs a global bun", () => {
    const offending: string[] = [];
    for (const file of DOC_FILES) {
      for (const block of read(file).matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
        for (const line of block[1].split("\n")) if (/^\s*(bun|bunx)\s/.test(line)) offending.push(`${file}: ${line.trim()}`);
      }
      for (const m of read(file).matchAll(/`(bun (?:run|test)[^`]*)`/g)) offending.push(`${file}: ${m[1]}`);
    }
    expect(offending).toEqual([]);
  });
});
