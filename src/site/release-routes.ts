/** /api/v1/latest, /api/v1/download/:id, /dl/:token, /update/latest.json (issue 5). */
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

export function releaseRoutes(_deps: AppDeps) {
  return new Elysia({ name: "site-releases" });
}
