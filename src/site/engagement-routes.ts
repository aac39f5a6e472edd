/** /api/v1/announcements and /api/v1/client/heartbeat (issue 6). */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

export function engagementRoutes(_deps: AppDeps) {
  return new Elysia({ name: "site-engagement" });
}
