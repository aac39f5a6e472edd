/**
 * The local operator file: how a command on the server's machine reaches the running server's admin API for what
 * only the server's process knows (the pool's state kept in its memory). `gantry serve` writes
 * `<data dir>/operator.json` at start — its address and a token made for this run — readable by its owner only,
 * and removes it when it stops; the server accepts the token as an admin bearer (AdminAuth.allowLocalOperator).
 * Whoever can read the file can already read the database beside it, so it grants nothing new.
 */
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomToken } from "../secrets";

export const OPERATOR_FILE = "operator.json";

export interface OperatorFile {
  url: string;
  token: string;
  pid: number;
}

/** The address a local client should use: a wildcard listener is reached on loopback. */
export function localUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === "0.0.0.0") u.hostname = "127.0.0.1";
  else if (u.hostname === "[::]") u.hostname = "[::1]";
  return u.origin;
}

/** Writes the file (owner-only, replaced atomically) and returns the token to accept and how to remove it. */
export function writeOperatorFile(dataDir: string, url: string): { token: string; remove(): void } {
  const token = `gop-${randomToken(24)}`;
  const path = join(dataDir, OPERATOR_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify({ url: localUrl(url), token, pid: process.pid } satisfies OperatorFile) + "\n", { mode: 0o600 });
  // The mode of writeFileSync is filtered by the umask; the file must be the owner's alone whatever it is.
  chmodSync(temp, 0o600);
  renameSync(temp, path);
  return {
    token,
    remove() {
      // Only this run's file: a later server on the same data dir has written its own.
      try {
        if ((JSON.parse(readFileSync(path, "utf8")) as OperatorFile).token === token) rmSync(path, { force: true });
      } catch {
        // Gone already.
      }
    },
  };
}

/** The running server's file, or null when none is there (no server has this data dir). */
export function readOperatorFile(dataDir: string): OperatorFile | null {
  const path = join(resolve(dataDir), OPERATOR_FILE);
  if (!existsSync(path)) return null;
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<OperatorFile>;
  if (typeof parsed.url !== "string" || typeof parsed.token !== "string") return null;
  return { url: parsed.url, token: parsed.token, pid: Number(parsed.pid) };
}
