/**
 * Several `gantry serve` processes on one PostgreSQL database, one Redis and optionally one S3 bucket, as a team runs them behind a
 * load balancer: each has a data dir of its own (as separate machines would), and the CLI runs against the
 * same database. For the scale-out tests in this folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gantryCommand, startServe, type ServeProcess } from "../reliability/serve-process";

export const CLUSTER_ADMIN_TOKEN = "gat-cluster-admin-token-0000000000000001";

export interface ClusterOptions {
  size?: number;
  databaseUrl: string;
  redisUrl: string;
  upstreamUrl: string;
  /** Extra `serve` flags for every instance. */
  args?: string[];
  /** Asset bytes in this S3 bucket (instances share no disk); default: each instance's own file-system mirror. */
  s3?: { bucket: string; endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
}

export interface Cluster {
  instances: ServeProcess[];
  /** The settings every instance and the CLI share. */
  env: Record<string, string>;
  /** Starts one more instance (e.g. after a kill), appended to `instances`. */
  add(): Promise<ServeProcess>;
  /** An admin API call on instance `i`. */
  admin(i: number, path: string, init?: RequestInit): Promise<Response>;
  /** A `gantry` command against the cluster's database; its stdout. */
  cli(args: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dirs: string[] = [];
  // Proxied assets of the tests are served from 127.0.0.1, which the fetch guard refuses unless it is listed.
  const env: Record<string, string> = {
    GANTRY_DATABASE_URL: opts.databaseUrl,
    GANTRY_REDIS_URL: opts.redisUrl,
    GANTRY_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
    GANTRY_ALLOWED_FETCH_HOSTS: "127.0.0.1",
  };
  if (opts.s3) {
    Object.assign(env, {
      GANTRY_S3_BUCKET: opts.s3.bucket,
      GANTRY_S3_ENDPOINT: opts.s3.endpoint,
      GANTRY_S3_REGION: opts.s3.region,
      GANTRY_S3_ACCESS_KEY_ID: opts.s3.accessKeyId,
      GANTRY_S3_SECRET_ACCESS_KEY: opts.s3.secretAccessKey,
    });
  }
  // The CLI, as on an operator's machine: a data dir of its own (it spools uploads there).
  const cliDir = mkdtempSync(join(tmpdir(), "gantry-cluster-cli-"));
  dirs.push(cliDir);
  const instances: ServeProcess[] = [];
  const add = async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gantry-cluster-"));
    dirs.push(dataDir);
    const p = await startServe({ dataDir, upstreamUrl: opts.upstreamUrl, upstreamKey: "upstream-key-cluster", env, args: opts.args });
    instances.push(p);
    return p;
  };
  try {
    // One at a time: the first applies the schema, the others find it done (they would also wait on its lock).
    for (let i = 0; i < (opts.size ?? 3); i++) await add();
  } catch (err) {
    for (const p of instances) p.kill("SIGKILL");
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    throw err;
  }
  return {
    instances,
    env,
    add,
    admin(i, path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${CLUSTER_ADMIN_TOKEN}`);
      if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
      return fetch(instances[i]!.url + path, { ...init, headers });
    },
    cli: (args) => gantryCommand(args, { ...env, GANTRY_DATA_DIR: cliDir }),
    async close() {
      for (const p of instances) p.kill("SIGTERM");
      await Promise.all(instances.map((p) => p.exited));
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
