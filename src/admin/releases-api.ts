/** /admin/api/releases (issue 5). */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

export function releasesApi(_deps: AppDeps) {
  return new Elysia({ name: "admin-releases", prefix: "/admin/api/releases" });
}
