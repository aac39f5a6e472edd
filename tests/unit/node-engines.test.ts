/**
 * `npm install` on the Node.js version the README asks for prints no EBADENGINE warning: package.json says which
 * version (engines.node), the README says the same, and every package in the lockfile accepts its lowest version.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));

test("package.json names the Node.js version, the README says it, and every locked package accepts it", () => {
  const range: string | undefined = pkg.engines?.node;
  expect(range).toMatch(/^>=\d+(\.\d+\.\d+)?$/);
  const major = /^>=(\d+)/.exec(range!)![1]!;
  const lowest = `${major}.0.0`;
  expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain(`Node.js ${major} or newer`);
  const refused: string[] = [];
  for (const [path, entry] of Object.entries<any>(lock.packages)) {
    const wants = entry.engines?.node;
    if (path && typeof wants === "string" && !Bun.semver.satisfies(lowest, wants)) refused.push(`${path} wants node ${wants}`);
  }
  expect(refused).toEqual([]);
});
