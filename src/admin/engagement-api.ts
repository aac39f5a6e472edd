/** /admin/api/announcements and /admin/api/stats/clients (issue 6). */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

export function engagementApi(_deps: AppDeps) {
  return new Elysia({ name: "admin-engagement", prefix: "/admin/api" });
}
