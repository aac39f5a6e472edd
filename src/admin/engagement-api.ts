/**
 * /admin/api/announcements (CRUD + re-show) and /admin/api/stats/clients (+ /series), behind the admin token
 * (checked globally for /admin/api/*). The same service methods back `gantry announcements` and `gantry stats`.
 */
import { Elysia } from "elysia";
import type { EngagementServices } from "../site/engagement-services";
import { MAX_JSON_DEPTH, readBodyText, readJsonObject } from "../http/body";
import { AnnouncementInput, ReshowInput, announcementAdminView, checkInput } from "../site/announcements/rules/announcement-input";
import type { StoredAnnouncement } from "../site/announcements/announcement-repository";
import { AppError } from "../errors";

/** 50 locales of long texts fit; anything larger is not an announcement. */
const MAX_ANNOUNCEMENT_BODY_BYTES = 1024 * 1024;

/** Bodies are read and checked by us (see checkInput): unknown fields are refused, errors get the envelope. */
async function announcementBody(request: Request): Promise<AnnouncementInput> {
  return checkInput(AnnouncementInput, (await readJsonObject(request, MAX_ANNOUNCEMENT_BODY_BYTES, { maxDepth: MAX_JSON_DEPTH })).body);
}

/** Re-show takes an optional body: none (or `{}`) asks for a generated key. */
async function reshowBody(request: Request): Promise<ReshowInput> {
  const text = await readBodyText(request, 4096);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("invalid_json", "The request body is not valid JSON.");
  }
  return checkInput(ReshowInput, value);
}

export interface EngagementApiDeps {
  engagement: Pick<EngagementServices, "announcements" | "stats">;
  now: () => number;
}

export function engagementApi(deps: EngagementApiDeps) {
  const { announcements, stats } = deps.engagement;
  const view = (a: StoredAnnouncement) => announcementAdminView(a, deps.now());
  const json = (value: unknown, status = 200) =>
    new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json; charset=utf-8" } });

  return new Elysia({ name: "admin-engagement", prefix: "/admin/api" })
    .get("/announcements", async () => ({ object: "list", data: (await announcements.list()).map(view) }))
    .post("/announcements", async ({ request }) => json(view(await announcements.create(await announcementBody(request))), 201), {
      parse: "none",
    })
    .get("/announcements/:id", async ({ params }) => view(await announcements.get(params.id)))
    .patch("/announcements/:id", async ({ params, request }) => view(await announcements.update(params.id, await announcementBody(request))), {
      parse: "none",
    })
    .post(
      "/announcements/:id/reshow",
      async ({ params, request }) => view(await announcements.reshow(params.id, (await reshowBody(request)).dismissKey)),
      { parse: "none" },
    )
    .delete("/announcements/:id", async ({ params }) => {
      await announcements.delete(params.id);
      return new Response(null, { status: 204 });
    })
    .get("/stats/clients", () => stats.clients())
    .get("/stats/clients/series", ({ query }) => stats.series(query));
}
