/**
 * How a user types "this gantry" in a shell, so printed hints work as shown: the compiled binary runs itself
 * (`gantry` when that is what PATH finds, else its path); a source checkout goes through its npm script
 * (`npm run gantry -- …`), which works on a machine with only Node.js and npm, since npm puts the checkout's
 * node_modules/.bin (where the bun package lives) on PATH.
 */
import { readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface Invocation {
  /** The words before the subcommand, e.g. `gantry` or `npm run gantry --`. */
  prefix: string;
  /** The directory to run it in (a source checkout), or null when any directory will do. */
  cwd: string | null;
}

export interface InvocationEnv {
  /** Bun.main: the entry script; inside a compiled binary a path in Bun's embedded file system. */
  main: string;
  execPath: string;
  /** Bun.which */
  which: (command: string) => string | null;
}

/** A compiled binary's entry lives in Bun's embedded file system (`/$bunfs/…`, or `B:/~BUN/…` on Windows). */
export function isCompiled(main: string): boolean {
  return main.startsWith("/$bunfs/") || /^[a-z]:[\\/]~bun[\\/]/i.test(main);
}

/** Quoted for a POSIX shell only when needed (temporary dirs rarely need it). */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Whether `root` is a checkout whose package.json has the `gantry` script. */
function hasGantryScript(root: string): boolean {
  try {
    return typeof JSON.parse(readFileSync(join(root, "package.json"), "utf8"))?.scripts?.gantry === "string";
  } catch {
    return false;
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

export function selfInvocation(env: InvocationEnv = { main: Bun.main, execPath: process.execPath, which: Bun.which }): Invocation {
  if (isCompiled(env.main)) {
    const found = env.which("gantry");
    return { prefix: found && samePath(found, env.execPath) ? "gantry" : shellWord(env.execPath), cwd: null };
  }
  // Running src/main.ts of a checkout.
  const root = dirname(dirname(env.main));
  if (basename(env.main) === "main.ts" && basename(dirname(env.main)) === "src" && hasGantryScript(root)) {
    return { prefix: "npm run gantry --", cwd: root };
  }
  return { prefix: `${shellWord(env.execPath)} ${shellWord(env.main)}`, cwd: null };
}
