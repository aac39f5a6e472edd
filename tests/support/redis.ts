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

export interface RedisServer {
  url: string;
  port: number;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
  /** Takes the server down (a fault); `up()` brings a new one on the same port (its data is gone: no persistence). */
  down(): Promise<void>;
  up(): Promise<void>;
  restart(): Promise<void>;
  /** The server process's pid (0 while down), for CPU accounting. */
  pid(): number;
}

type Server = RedisServer;

let server: Promise<Server> | null = null;

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Starts redis-server on `port`; null when the port was taken meanwhile. */
async function launch(dir: string, port: number): Promise<ReturnType<typeof Bun.spawn> | null> {
  const proc = Bun.spawn([BINARY, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdout: "pipe",
    stderr: "pipe",
  });
  // Ready when it says so on stdout (or gone when the port was taken meanwhile).
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  while (!out.includes("Ready to accept connections")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  if (out.includes("Ready to accept connections")) return proc;
  proc.kill();
  return null;
}

async function start(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "gantry-redis-"));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    let proc = await launch(dir, port);
    if (!proc) {
      if (attempt >= 3) throw new Error("redis-server did not start");
      continue;
    }
    const halt = async () => {
      proc?.kill();
      await proc?.exited;
      proc = null;
    };
    process.once("exit", () => proc?.kill("SIGKILL"));
    const server: Server = {
      url: `redis://127.0.0.1:${port}`,
      port,
      async stop() {
        await halt();
        rmSync(dir, { recursive: true, force: true });
      },
      down: halt,
      pid: () => proc?.pid ?? 0,
      async restart() {
        await halt();
        await server.up();
      },
      async up() {
        // The old server's socket may linger a moment: try until the port is ours again.
        for (let i = 0; i < 100 && !proc; i++) {
          proc = await launch(dir, port);
          if (!proc) await Bun.sleep(50);
        }
        if (!proc) throw new Error(`redis-server did not restart on port ${port}`);
      },
    };
    return server;
  }
}

/** A Redis server of the caller's own (to stop and restart in fault tests); the caller stops it. */
export async function startRedisServer(): Promise<RedisServer> {
  const unavailable = redisUnavailable();
  if (unavailable) throw new Error(`cannot start Redis for this test: ${unavailable}`);
  return start();
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
