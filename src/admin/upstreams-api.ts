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

/** The account name of the path; the router hands over null for a malformed %-escape (`/upstreams/%ZZ/test`). */
function nameOf(params: { name?: unknown }): string {
  if (typeof params.name !== "string" || params.name === "") throw new AppError("invalid_request", "The account name in the path is not valid (a malformed %-escape?).", { param: "name" });
  return params.name;
}

export function upstreamsApi(deps: UpstreamsApiDeps) {
  const status = async (name: string) => {
    const found = (await deps.pool.list()).find((a) => a.name === name);
    if (!found) throw new AppError("not_found", `No upstream account is named ${JSON.stringify(name.slice(0, 100))}.`);
    return found;
  };
  return new Elysia({ name: "admin-upstreams", prefix: "/admin/api/upstreams" })
    .get("/", async () => ({ object: "list", data: await deps.pool.list() }))
    .post("/:name/test", async ({ params }) => {
      const name = nameOf(params);
      return { name, ...(await deps.pool.test(name)) };
    })
    .post("/:name/disable", async ({ params }) => {
      const name = nameOf(params);
      await deps.pool.disable(name);
      return status(name);
    })
    .post("/:name/enable", async ({ params }) => {
      const name = nameOf(params);
      await deps.pool.enable(name);
      return status(name);
    });
}
