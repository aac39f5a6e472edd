/**
 * /admin/api/keys: the key operations of the CLI, as JSON, behind the admin token. The body shape is described
 * in docs/admin-api-keys.md.
 */
import { Elysia } from "elysia";
import { AppError } from "../errors";
import type { KeyCache } from "../gateway/keys/key-cache";
import { NO_USAGE, type KeyRepository } from "../gateway/keys/key-repository";
import type { StoredResponseRepository } from "../gateway/responses/stored-response-repository";
import type { UsageLedger } from "../gateway/usage/ledger-repository";
import { MAX_JSON_DEPTH, readJsonObject } from "../http/body";
import { checkKeyInput, keyFieldsFrom, keyView, type KeyInput } from "../gateway/keys/key-input";
import { keyUsageReport, usageDays } from "../gateway/usage/key-usage";

/** A thousand model patterns of 200 characters fit; anything larger is not a key. */
const MAX_KEY_BODY_BYTES = 512 * 1024;

/**
 * Bodies are read and checked by us, not by Elysia's `body:` option: Elysia removes unknown fields before it
 * validates (its `normalize` setting), so `additionalProperties: false` never fired and `{"qota": 5}` made an
 * unlimited key. checkKeyInput refuses them with a 400 that names the field.
 */
async function keyBody(request: Request): Promise<KeyInput> {
  return checkKeyInput((await readJsonObject(request, MAX_KEY_BODY_BYTES, { maxDepth: MAX_JSON_DEPTH })).body);
}

export interface KeysApiDeps {
  keys: KeyRepository;
  keyCache: Pick<KeyCache, "reload">;
  ledger: Pick<UsageLedger, "flush" | "series">;
  /** For the usage report: what the key keeps. */
  responses: Pick<StoredResponseRepository, "stats">;
  now: () => number;
}

export function keysApi(deps: KeysApiDeps) {
  const find = async (idOrName: string) => {
    const key = await deps.keys.get(idOrName);
    if (!key) throw new AppError("not_found", `No key '${idOrName}'.`);
    return key;
  };
  const view = async (id: string) => {
    const key = await find(id);
    return keyView(key, await deps.keys.usage(key.id));
  };
  const uniqueName = async (name: string | undefined, selfId?: string) => {
    if (name === undefined) return;
    const other = await deps.keys.get(name);
    if (other && other.id !== selfId) throw new AppError("conflict", `A key named '${name}' exists already.`, { param: "name" });
  };
  // A key created or changed here works on the gateway at once, not when the change feed next reports it.
  const changed = () => deps.keyCache.reload();

  return new Elysia({ prefix: "/admin/api/keys" })
    .get("/", async () => {
      const [keys, usage] = await Promise.all([deps.keys.list(), deps.keys.allUsage()]);
      return { object: "list", data: keys.map((k) => keyView(k, usage.get(k.id) ?? NO_USAGE)) };
    })
    .post(
      "/",
      async ({ request, set }) => {
        const body = await keyBody(request);
        if (body.name === undefined) throw new AppError("invalid_request", "A key needs a 'name'.", { param: "name" });
        await uniqueName(body.name);
        const { key, secret } = await deps.keys.create({ ...keyFieldsFrom(body), name: body.name });
        await changed();
        set.status = 201;
        return { ...keyView(key, await deps.keys.usage(key.id)), key: secret };
      },
      { parse: "none" },
    )
    .get("/:id", ({ params }) => view(params.id))
    .patch(
      "/:id",
      async ({ params, request }) => {
        const key = await find(params.id);
        const body = await keyBody(request);
        await uniqueName(body.name, key.id);
        await deps.keys.update(key.id, keyFieldsFrom(body, key));
        if (body.resetUsage) await deps.keys.resetUsage(key.id);
        await changed();
        return view(key.id);
      },
      { parse: "none" },
    )
    .post("/:id/disable", async ({ params }) => {
      await deps.keys.update((await find(params.id)).id, { status: "disabled" });
      await changed();
      return view(params.id);
    })
    .post("/:id/enable", async ({ params }) => {
      await deps.keys.update((await find(params.id)).id, { status: "active" });
      await changed();
      return view(params.id);
    })
    .delete("/:id", async ({ params, set }) => {
      await deps.keys.delete((await find(params.id)).id);
      await changed();
      set.status = 204;
      return null;
    })
    .get("/:id/usage", async ({ params, query }) => keyUsageReport(deps, await find(params.id), usageDays(query.days)));
}
