/**
 * Settings Bun reads only when its process starts, which the server needs: set here by re-executing the same
 * process image (execve keeps the pid, the open descriptors, the parent and so signals and the exit code), so no
 * operator has to know Bun's variables.
 *
 * Bun's `fetch` runs at most 256 requests at once (queuing the rest) unless BUN_CONFIG_MAX_HTTP_REQUESTS is set
 * when the process starts; setting `process.env` later, or the C environment through FFI, changes nothing (tried
 * on Bun 1.4.5). Every open gateway stream is one such request.
 */
import { isCompiled } from "./self-invocation";

export const MAX_HTTP_REQUESTS_VARIABLE = "BUN_CONFIG_MAX_HTTP_REQUESTS";
/** Bun's own ceiling is 65535; 4096 streams at once is far past what one instance serves. */
export const MAX_HTTP_REQUESTS = "4096";
/** The commands that run a server whose gateway opens upstream streams. */
const SERVER_COMMANDS = new Set(["serve", "demo"]);

export interface StartEnv {
  /** process.argv: [bun, script, ...words], or in a compiled binary [bun, /$bunfs/root/…, ...words]. */
  argv: readonly string[];
  /** Bun's own flags before the script (`bun --smol src/main.ts`): none in a compiled binary. */
  execArgv: readonly string[];
  execPath: string;
  main: string;
  env: Record<string, string | undefined>;
}

export interface ExecPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** What to execute so that the process starts with the settings it needs, or null when it already has them. */
export function startEnvPlan(start: StartEnv): ExecPlan | null {
  if (!SERVER_COMMANDS.has(start.argv[2] ?? "")) return null;
  // An operator's own value (or the one set by the re-execution) stands.
  if (start.env[MAX_HTTP_REQUESTS_VARIABLE]) return null;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(start.env)) if (v !== undefined) env[k] = v;
  env[MAX_HTTP_REQUESTS_VARIABLE] = MAX_HTTP_REQUESTS;
  // A compiled binary finds its code inside itself: its arguments are the words alone. From source, Bun needs its
  // flags and the script again.
  const args = isCompiled(start.main)
    ? [start.execPath, ...start.argv.slice(2)]
    : [start.execPath, ...start.execArgv, ...start.argv.slice(1)];
  return { file: start.execPath, args, env };
}

/**
 * Re-executes this process with the settings it needs, if it lacks them; returns only when it did not (nothing to
 * set, or no execve on this platform, or it failed: the server then runs with Bun's default and says so).
 */
export function ensureStartEnv(): void {
  const plan = startEnvPlan({ argv: process.argv, execArgv: process.execArgv, execPath: process.execPath, main: Bun.main, env: process.env });
  const execve = (process as { execve?: (file: string, args: string[], env: Record<string, string>) => never }).execve;
  if (!plan || typeof execve !== "function") return;
  try {
    execve(plan.file, plan.args, plan.env);
  } catch {
    // Left unset: `serve` warns that upstream streams are capped.
  }
}
