import { expect, test } from "bun:test";
import { startEnvPlan } from "../../src/cli/bun-start-env";

const source = { argv: ["/usr/bin/bun", "/src/gantry/src/main.ts", "serve", "--port", "9000"], execArgv: ["--smol"], execPath: "/usr/bin/bun", main: "/src/gantry/src/main.ts" };
const compiled = { argv: ["bun", "/$bunfs/root/gantry", "serve", "--port", "9000"], execArgv: [], execPath: "/usr/local/bin/gantry", main: "/$bunfs/root/gantry" };

test("a server command without the variable re-executes itself with it, the same words and Bun flags", () => {
  expect(startEnvPlan({ ...source, env: { PATH: "/bin", GANTRY_PORT: "1" } })).toEqual({
    file: "/usr/bin/bun",
    args: ["/usr/bin/bun", "--smol", "/src/gantry/src/main.ts", "serve", "--port", "9000"],
    env: { PATH: "/bin", GANTRY_PORT: "1", BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
  });
  // A compiled binary holds its code: the words alone follow it.
  expect(startEnvPlan({ ...compiled, env: {} })?.args).toEqual(["/usr/local/bin/gantry", "serve", "--port", "9000"]);
  expect(startEnvPlan({ ...compiled, argv: ["bun", "/$bunfs/root/gantry", "demo"], env: {} })?.args).toEqual(["/usr/local/bin/gantry", "demo"]);
});

test("nothing to do: one-shot commands, an operator's value, the re-executed process", () => {
  expect(startEnvPlan({ ...source, argv: ["/usr/bin/bun", "/src/gantry/src/main.ts", "keys", "list"], env: {} })).toBeNull();
  expect(startEnvPlan({ ...compiled, argv: ["bun", "/$bunfs/root/gantry"], env: {} })).toBeNull();
  expect(startEnvPlan({ ...source, env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "1000" } })).toBeNull();
});
