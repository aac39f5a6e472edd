/**
 * Real minisign (Debian's /usr/bin/minisign) driven by the tests: key pairs without a password, and signatures
 * prehashed (minisign's default) or legacy (-l).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface MinisignKeys {
  /** The .pub file's path. */
  pubPath: string;
  secPath: string;
  /** The base64 key line (RW…). */
  line: string;
}

function run(args: string[]): void {
  const r = Bun.spawnSync(["minisign", ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  if (r.exitCode !== 0) throw new Error(`minisign ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

/** A new key pair in `dir` (files `name.pub`, `name.key`). */
export function minisignKeys(dir: string, name = "release"): MinisignKeys {
  const pubPath = join(dir, `${name}.pub`);
  const secPath = join(dir, `${name}.key`);
  run(["-G", "-W", "-p", pubPath, "-s", secPath]);
  const line = readFileSync(pubPath, "utf8").trim().split("\n")[1].trim();
  return { pubPath, secPath, line };
}

/** Signs `file` into `sigPath` (default FILE.minisig); returns the signature file's text. */
export function minisignSign(keys: MinisignKeys, file: string, opts: { legacy?: boolean; sigPath?: string; trusted?: string } = {}): string {
  const sigPath = opts.sigPath ?? `${file}.minisig`;
  run(["-S", ...(opts.legacy ? ["-l"] : []), "-s", keys.secPath, "-m", file, "-x", sigPath, ...(opts.trusted ? ["-t", opts.trusted] : [])]);
  return readFileSync(sigPath, "utf8");
}
