/**
 * `gantry upstreams list [--json] | test NAME | disable NAME | enable NAME`: the upstream accounts of the running
 * server. Their state lives in the server's process (or in Redis, which the server reads for them), so the command
 * asks the server through its admin API, with the local operator file it wrote in the data dir (operator-file.ts).
 */
import { resolve } from "node:path";
import { AppError } from "../errors";
import type { AccountStatus } from "../gateway/upstream/pool-port";
import type { Command, Group } from "./command";
import { CommandError, UsageError, configFrom, print, printJson, table } from "./common";
import { readOperatorFile } from "./operator-file";

const SETTINGS = ["data-dir"];

/** One request to the running server's admin API; its error envelope becomes the command's message. */
async function askServer(values: Record<string, unknown>, method: "GET" | "POST", path: string): Promise<any> {
  const { dataDir } = configFrom(values);
  const file = readOperatorFile(dataDir);
  if (!file) throw new CommandError(`no running server for the data dir ${resolve(dataDir)} (start gantry serve, or pass its --data-dir)`);
  let res: Response;
  try {
    res = await fetch(`${file.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${file.token}`, accept: "application/json" },
      // The server's own loopback address: its certificate names the public host, not this one.
      tls: { rejectUnauthorized: false },
      signal: AbortSignal.timeout(30_000),
    } as RequestInit);
  } catch (err) {
    throw new CommandError(`the server of ${resolve(dataDir)} does not answer at ${file.url} (${(err as Error).message}); is it running?`);
  }
  const body = await res.json().catch(() => null);
  if (res.status === 401) throw new CommandError(`the server at ${file.url} refused the operator token of ${resolve(dataDir)} (a server of another data dir on that address?)`);
  if (!res.ok) throw new AppError(res.status === 404 ? "not_found" : "invalid_request", String(body?.error?.message ?? `the server answered ${res.status}`));
  return body;
}

function counters(c: AccountStatus["counters"]): string {
  const failures = Object.entries(c.failures).map(([kind, n]) => `${kind}:${n}`).join(",") || "0";
  return `requests=${c.requests} failures=${failures} failovers=${c.failovers} cooldowns=${c.cooldowns}`;
}

function describe(accounts: AccountStatus[]): string {
  if (accounts.length === 0) return "no upstream accounts are configured\n";
  const rows = accounts.map((a) => ({ name: a.name, state: a.state, until: a.until, reason: a.reason, inFlight: a.inFlight, counters: counters(a.counters) }));
  return table(rows, ["name", "state", "until", "reason", "inFlight", "counters"]) + "\n";
}

function oneName(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "needs an account name" : `takes one account name, got ${positionals.length}`);
  return positionals[0]!;
}

const action = (verb: "disable" | "enable", summary: string): Command => ({
  name: `upstreams ${verb}`,
  args: "NAME [--json]",
  summary,
  options: { json: { type: "boolean" } },
  positionals: true,
  settings: SETTINGS,
  run: async ({ values, positionals }) => {
    const name = oneName(positionals);
    const account = (await askServer(values, "POST", `/admin/api/upstreams/${encodeURIComponent(name)}/${verb}`)) as AccountStatus;
    if (values.json) printJson(account);
    else print(describe([account]));
  },
});

export const upstreamsGroup: Group = {
  name: "upstreams",
  summary: "the upstream accounts of the running server: state, cooldowns, counts; test, disable, enable",
  details: "Asks the server running on this data dir (through the operator file it writes there: run on its machine, as its user).",
  commands: [
    {
      name: "upstreams list",
      args: "[--json]",
      summary: "each account with its state (healthy, cooling, probing, disabled), until when, why, streams in flight and counts",
      details: "--json   the accounts of GET /admin/api/upstreams (name, state, until, reason, inFlight, counters, …)",
      options: { json: { type: "boolean" } },
      settings: SETTINGS,
      run: async ({ values }) => {
        const { data } = (await askServer(values, "GET", "/admin/api/upstreams")) as { data: AccountStatus[] };
        if (values.json) printJson(data);
        else print(describe(data));
      },
    },
    {
      name: "upstreams test",
      args: "NAME [--json]",
      summary: "ask the account for its model list with its key and say what came back (changes nothing)",
      options: { json: { type: "boolean" } },
      positionals: true,
      settings: SETTINGS,
      run: async ({ values, positionals }) => {
        const name = oneName(positionals);
        const r = (await askServer(values, "POST", `/admin/api/upstreams/${encodeURIComponent(name)}/test`)) as { ok: boolean; status: number | null; message: string; ms: number };
        if (values.json) printJson(r);
        else print(`${name}: ${r.ok ? "ok" : "failed"}${r.status === null ? "" : ` (${r.status})`} in ${r.ms} ms: ${r.message}\n`);
        return r.ok ? 0 : 1;
      },
    },
    action("disable", "take the account out until an operator enables it"),
    action("enable", "bring the account back: clears its cooldowns, its disabling and its failure window"),
  ],
};
