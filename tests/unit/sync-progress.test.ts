import { describe, expect, test } from "bun:test";
import { formatBytes, formatDuration, renderProgressLine, terminalProgress } from "../../src/site/releases/sync-progress";

describe("progress rendering", () => {
  test("bytes, speed and ETA", () => {
    const line = renderProgressLine({ label: "1.2.0 app.exe", bytes: 10 * 1048576, total: 40 * 1048576, elapsedMs: 5000, width: 100 });
    expect(line).toContain("1.2.0 app.exe [");
    expect(line).toContain("10.0 MiB/40.0 MiB");
    expect(line).toContain("2.0 MiB/s");
    expect(line).toContain("ETA 15s");
    expect(line.length).toBeLessThanOrEqual(100);
    const bar = /\[([^\]]*)\]/.exec(line)![1];
    expect(bar.startsWith("=")).toBe(true);
  });
  test("unknown total: no bar, no ETA; long labels are cut", () => {
    const line = renderProgressLine({ label: "x".repeat(200), bytes: 2048, total: null, elapsedMs: 1000, width: 60 });
    expect(line).not.toContain("[");
    expect(line).toContain("ETA --");
    expect(line.length).toBeLessThanOrEqual(60);
  });
  test("formatting", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatDuration(75)).toBe("1m15s");
    expect(formatDuration(7300)).toBe("2h01m");
    expect(formatDuration(Number.NaN)).toBe("--");
  });
  test("the terminal reporter redraws in place and ends each file with a line", () => {
    const out: string[] = [];
    let t = 0;
    const p = terminalProgress({ write: (s) => out.push(s), columns: 80 }, () => t);
    p.start("a.exe", 100);
    t = 50;
    p.update(10); // throttled: under 100 ms since the last draw
    t = 200;
    p.update(60);
    p.finish(true, "done");
    expect(out.every((s) => s.startsWith("\r"))).toBe(true);
    expect(out.length).toBe(4);
    expect(out.at(-1)).toEndWith("a.exe  done\n");
  });
});
