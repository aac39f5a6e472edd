/**
 * /admin/api/keys: the key operations of the CLI, as JSON, behind the admin token. The body shape is described
 * in docs/admin-api-keys.md.
 */
import { Elysia } from "elysia";
import { AppError } from "../errors";
import type { AppDeps } from "../deps";
import { readJsonObject } from "../http/body";
import { checkKeyInput, keyFieldsFrom, keyView, type KeyInput } from "./key-input";
import { keyUsageReport, usageDays } from "./key-usage";

/** A thousand model patterns of 200 characters fit; anything larger is not a key. */
const MAX_KEY_BODY_BYTES = 512 * 1024;

/**
 * Bodies are read and checked by us, not by Elysia's `body:` option: Elysia removes unknown fields before it
 * validates (its `normalize` setting), so `additionalProperties: false` never fired and `{"qota": 5}` made an
 * unlimited key. checkKeyInput refuses them with a 400 that names the field.
 */
async function keyBody(request: Request): Promise<KeyInput> {
  return checkKeyInput((await readJsonObject(request, MAX_KEY_BODY_BYTES)).body);
}

export function keysApi(deps: AppDeps) {
  const find = (idOrName: string) => {
    const key = deps.keys.get(idOrName);
    if (!key) throw new AppError("not_found", `No key '${idOrName}'.`);
    return key;
  };
  const view = (id: string) => {
    const key = find(id);
    return keyView(key, deps.keys.usage(key.id));
  };
  const uniqueName = (name: string | undefined, selfId?: string) => {
    if (name === undefined) return;
    const other = deps.keys.get(name);
    if (other && other.id !== selfId) throw new AppError("conflict", `A key named '${name}' exists already.`, { param: "name" });
  };

  return new Elysia({ prefix: "/admin/api/keys" })
    // A key created or changed here works on the gateway at once, not at the next twice-a-second check.
    .onAfterHandle(({ request }) => {
      if (request.method !== "GET") deps.keyCache.reloadIfChanged();
    })
    .get("/", () => ({ object: "list", data: deps.keys.list().map((k) => keyView(k, deps.keys.usage(k.id))) }))
    .post(
      "/",
      async ({ request, set }) => {
        const body = await keyBody(request);
        if (body.name === undefined) throw new AppError("invalid_request", "A key needs a 'name'.", { param: "name" });
        uniqueName(body.name);
        const { key, secret } = deps.keys.create({ ...keyFieldsFrom(body), name: body.name });
        set.status = 201;
        return { ...keyView(key, deps.keys.usage(key.id)), key: secret };
      },
      { parse: "none" },
    )
    .get("/:id", ({ params }) => view(params.id))
    .patch(
      "/:id",
      async ({ params, request }) => {
        const key = find(params.id);
        const body = await keyBody(request);
        uniqueName(body.name, key.id);
        deps.keys.update(key.id, keyFieldsFrom(body, key));
        if (body.resetUsage) deps.keys.resetUsage(key.id);
        return view(key.id);
      },
      { parse: "none" },
    )
    .post("/:id/disable", ({ params }) => (deps.keys.update(find(params.id).id, { status: "disabled" }), view(params.id)))
    .post("/:id/enable", ({ params }) => (deps.keys.update(find(params.id).id, { status: "active" }), view(params.id)))
    .delete("/:id", ({ params, set }) => {
      deps.keys.delete(find(params.id).id);
      set.status = 204;
      return null;
    })
    .get("/:id/usage", ({ params, query }) => keyUsageReport(deps, find(params.id), usageDays(query.days)));
}
