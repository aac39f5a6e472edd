/** Self and inclusive time per function of a .cpuprofile (Chrome format, as written by `bun --cpu-prof`). */
import { readFileSync } from "node:fs";
import { GANTRY_SOURCE } from "./servers";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export function summarize(file: string, topN: number): string {
  const prof = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  const label = (n: Node) => {
    const url = n.callFrame.url.replace(GANTRY_SOURCE + "/", "").replace(/^.*node_modules\//, "~/");
    return `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
  };
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0;
    all += dt;
    const n = byId.get(id)!;
    self.set(label(n), (self.get(label(n)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  });
  const fmt = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([l, t]) => `  ${((100 * t) / all).toFixed(1).padStart(5)}%  ${l}`)
      .join("\n");
  return `samples: ${prof.samples.length}, ${(all / 1000).toFixed(0)} ms\n\nself time:\n${fmt(self)}\n\ninclusive time:\n${fmt(total)}\n`;
}

