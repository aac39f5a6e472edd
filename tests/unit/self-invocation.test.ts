/** How the demo tells the user to run gantry again: the compiled binary itself, or the checkout's npm script. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { isCompiled, selfInvocation, shellWord } from "../../src/cli/self-invocation";

const ROOT = join(import.meta.dir, "..", "..");

describe("selfInvocation", () => {
  test("a compiled binary found on PATH as gantry is just `gantry`", () => {
    const exe = process.execPath; // any real file: the comparison resolves both paths
    expect(selfInvocation({ main: "/$bunfs/root/gantry", execPath: exe, which: () => exe })).toEqual({ prefix: "gantry", cwd: null });
  });
  test("a compiled binary not on PATH is called by its path", () => {
    expect(selfInvocation({ main: "/$bunfs/root/gantry", execPath: "/opt/my apps/gantry", which: () => null })).toEqual({
      prefix: "'/opt/my apps/gantry'",
      cwd: null,
    });
    expect(isCompiled("B:/~BUN/root/gantry.exe")).toBe(true);
  });
  test("from a source checkout: the npm script, run in the checkout (works where bun is not on PATH)", () => {
    const main = join(ROOT, "src", "main.ts");
    expect(selfInvocation({ main, execPath: "/x/node_modules/bun/bin/bun.exe", which: () => null })).toEqual({ prefix: "npm run gantry --", cwd: ROOT });
  });
  test("any other entry script: bun and the script, by path", () => {
    expect(selfInvocation({ main: "/tmp/other/run.ts", execPath: "/x/bun", which: () => null })).toEqual({ prefix: "/x/bun /tmp/other/run.ts", cwd: null });
  });
});

test("shellWord quotes only when needed", () => {
  expect(shellWord("/tmp/gantry-demo-Ab_9")).toBe("/tmp/gantry-demo-Ab_9");
  expect(shellWord("/tmp/a b")).toBe("'/tmp/a b'");
  expect(shellWord("it's")).toBe(`'it'\\''s'`);
});
