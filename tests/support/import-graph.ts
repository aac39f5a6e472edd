/**
 * The project's import graph, read from the source text: every relative `import`/`export ... from` of every
 * file under src/, with whether it is type-only. The layout test checks its rules on it.
 */
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface ImportEdge {
  /** Paths relative to the repository root, e.g. "src/gateway/call.ts". */
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
  /** Bare specifiers (packages, `bun:*`, `node:*`) per file. */
  packages: Map<string, Set<string>>;
  source: Map<string, string>;
}

const STATEMENT = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) out.push(p);
  }
}

function resolveFile(fromDir: string, spec: string): string | null {
  const base = resolve(fromDir, spec);
  for (const c of [base, `${base}.ts`, join(base, "index.ts")]) if (existsSync(c) && statSync(c).isFile()) return c;
  return null;
}

export function readImportGraph(root: string): ImportGraph {
  const abs: string[] = [];
  walk(join(root, "src"), abs);
  const files = abs.map((f) => relative(root, f)).sort();
  const edges: ImportEdge[] = [];
  const packages = new Map<string, Set<string>>();
  const source = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    source.set(file, text);
    const bare = new Set<string>();
    for (const m of text.matchAll(STATEMENT)) {
      const spec = m[4] ?? m[5];
      if (!spec.startsWith(".")) {
        bare.add(spec);
        continue;
      }
      const target = resolveFile(dirname(join(root, file)), spec);
      if (!target || !target.endsWith(".ts")) continue;
      // `import type {…}` and `import { type A, type B }` are both type-only.
      const names = m[3] ?? "";
      const inner = /\{([^}]*)\}/.exec(names)?.[1];
      const allTypes = inner !== undefined && !/^[^{]*\w/.test(names.replace(/\{[^}]*\}/, "")) && inner.split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "));
      edges.push({ from: file, to: relative(root, target), typeOnly: Boolean(m[2]) || allTypes });
    }
    packages.set(file, bare);
  }
  return { files, edges, packages, source };
}

/** Every cycle of the graph, each once, as the list of files around it (Tarjan's strongly connected components). */
export function importCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const f of graph.files) if (!idx.has(f)) visit(f);
  return cycles;
}

/** Every file `start` loads when it runs, itself included: the closure of its imports, type-only ones left out (erased). */
export function runtimeClosure(graph: ImportGraph, start: string[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const e of graph.edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(next.get(f) ?? []));
  }
  return seen;
}

/** Pairs of folders that import each other (either way, type-only imports included), each pair once as "a <-> b". */
export function folderCycles(graph: ImportGraph, inScope: (folder: string) => boolean): string[] {
  const folder = (f: string) => f.slice(0, f.lastIndexOf("/"));
  const links = new Set<string>();
  for (const e of graph.edges) {
    const a = folder(e.from);
    const b = folder(e.to);
    if (a !== b && inScope(a) && inScope(b)) links.add(`${a} -> ${b}`);
  }
  const pairs: string[] = [];
  for (const l of links) {
    const [a, b] = l.split(" -> ");
    if (a < b && links.has(`${b} -> ${a}`)) pairs.push(`${a} <-> ${b}`);
  }
  return pairs.sort();
}
