/**
 * /admin/api/upstreams: the upstream accounts as operators see them (state, cooling until, why, streams in flight,
 * counts) and the operators' actions on one: a test request, disable, enable. Behind the admin guard (token or a
 * back-office session with its CSRF token), like every /admin/api route. `gantry upstreams` calls the same routes.
 */
import { Elysia } from "elysia";
import { AppError } from "../errors";
import type { PoolView } from "../gateway/upstream/pool-port";

export interface UpstreamsApiDeps {
  pool: PoolView;
}

export function upstreamsApi(deps: UpstreamsApiDeps) {
  const status = async (name: string) => {
    const found = (await deps.pool.list()).find((a) => a.name === name);
    if (!found) throw new AppError("not_found", `No upstream account is named ${JSON.stringify(name.slice(0, 100))}.`);
    return found;
  };
  return new Elysia({ name: "admin-upstreams", prefix: "/admin/api/upstreams" })
    .get("/", async () => ({ object: "list", data: await deps.pool.list() }))
    .post("/:name/test", async ({ params }) => ({ name: params.name, ...(await deps.pool.test(params.name)) }))
    .post("/:name/disable", async ({ params }) => {
      await deps.pool.disable(params.name);
      return status(params.name);
    })
    .post("/:name/enable", async ({ params }) => {
      await deps.pool.enable(params.name);
      return status(params.name);
    });
}
