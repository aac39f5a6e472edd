/**
 * A real Redis server for tests: Debian's redis-server on 127.0.0.1, no persistence, in a temporary
 * directory; started on first use, shared by the run's test files and stopped by `stopRedis` after the last
 * one (tests/support/global-teardown.ts). Without the binary, `redisUnavailable()` says why.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BINARY = "/usr/bin/redis-server";

export function redisUnavailable(): string | null {
  return existsSync(BINARY) ? null : `Redis is not installed (no ${BINARY}; .ci/system-deps installs the Debian package "redis-server")`;
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

let server: Promise<Server> | null = null;

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

async function start(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "gantry-redis-"));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = Bun.spawn([BINARY, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
      stdout: "pipe",
      stderr: "pipe",
    });
    // Ready when it says so on stdout (or gone when the port was taken meanwhile).
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("Ready to accept connections")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    if (out.includes("Ready to accept connections")) {
      return {
        url: `redis://127.0.0.1:${port}`,
        async stop() {
          proc.kill();
          await proc.exited;
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    proc.kill();
    if (attempt >= 3) throw new Error(`redis-server did not start: ${out.slice(-500)}`);
  }
}

/** The URL of the run's Redis server (started on first call). */
export async function redisUrl(): Promise<string> {
  const unavailable = redisUnavailable();
  if (unavailable) throw new Error(`cannot start Redis for this test: ${unavailable}`);
  server ??= start();
  return (await server).url;
}

export async function stopRedis(): Promise<void> {
  const s = server;
  server = null;
  if (s) await (await s).stop();
}
