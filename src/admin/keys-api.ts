/** /admin/api/keys: the key operations of the CLI, as JSON, behind the admin token. */
import { Elysia, t } from "elysia";
import { AppError } from "../errors";
import type { AppDeps } from "../deps";
import { KeyInput, keyFieldsFrom, keyView } from "./key-input";
import { keyUsageReport, usageDays } from "./key-usage";

const CreateInput = t.Composite([t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }), t.Omit(KeyInput, ["name"])], {
  additionalProperties: false,
});

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
      ({ body, set }) => {
        uniqueName(body.name);
        const { key, secret } = deps.keys.create({ ...keyFieldsFrom(body), name: body.name });
        set.status = 201;
        return { ...keyView(key, deps.keys.usage(key.id)), key: secret };
      },
      { body: CreateInput },
    )
    .get("/:id", ({ params }) => view(params.id))
    .patch(
      "/:id",
      ({ params, body }) => {
        const key = find(params.id);
        uniqueName(body.name, key.id);
        deps.keys.update(key.id, keyFieldsFrom(body));
        if (body.resetUsage) deps.keys.resetUsage(key.id);
        return view(key.id);
      },
      { body: KeyInput },
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
