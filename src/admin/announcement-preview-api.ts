/**
 * POST /admin/api/announcements/preview: what an announcement being edited would look like, without saving
 * it. The same rules as create/update resolve the input (so the form learns about a bad field while typing),
 * and the public item each surface would receive is built by the same function as /api/v1/announcements.
 *
 * Body: { input: <announcement fields>, id?: <the item being edited>, locale?: <language tag> }.
 */
import { Elysia } from "elysia";
import { t } from "elysia";
import type { EngagementServices } from "../site/engagement-services";
import { MAX_JSON_DEPTH, readJsonObject } from "../http/body";
import { toAnnouncementView } from "../site/announcements/rules/announcements";
import { AnnouncementInput, announcementStatus, checkInput, resolveAnnouncement } from "../site/announcements/rules/announcement-input";
import type { Announcement } from "../site/announcements/announcement-repository";
import type { AnnouncementView, Surface } from "../site/announcements/rules/announcement-types";

const PreviewBody = t.Object(
  {
    input: AnnouncementInput,
    id: t.Optional(t.Integer({ minimum: 1 })),
    locale: t.Optional(t.String({ maxLength: 35 })),
  },
  { additionalProperties: false },
);

export interface SurfacePreview {
  /** Whether the item is aimed at this surface at all (time window and version range aside). */
  targeted: boolean;
  item: AnnouncementView | null;
}

/** Pure: the per-surface view of resolved fields. */
export function previewSurfaces(item: Announcement, locale: string): Record<Surface, SurfacePreview> {
  const view = (surface: Surface): SurfacePreview => {
    const targeted = item.targetSurface === "all" || item.targetSurface === surface;
    return { targeted, item: targeted ? toAnnouncementView(item, locale) : null };
  };
  return { client: view("client"), home: view("home") };
}

export interface AnnouncementPreviewDeps {
  engagement: Pick<EngagementServices, "announcements">;
  now: () => number;
}

export function announcementPreviewApi(deps: AnnouncementPreviewDeps) {
  const { announcements } = deps.engagement;
  return new Elysia({ name: "admin-announcement-preview" }).post(
    "/admin/api/announcements/preview",
    async ({ request }) => {
      const body = checkInput(PreviewBody, (await readJsonObject(request, 1024 * 1024, { maxDepth: MAX_JSON_DEPTH })).body);
      const base = body.id === undefined ? null : await announcements.get(body.id);
      const now = deps.now();
      // A new item's dismissKey is generated on save; the preview shows a placeholder, not a key that will change.
      const fields = resolveAnnouncement(body.input, base, { now, newDismissKey: () => "(generated on save)" });
      const item: Announcement = { id: base?.id ?? 0, ...fields };
      return { status: announcementStatus(item, now), surfaces: previewSurfaces(item, body.locale ?? "") };
    },
    { parse: "none" },
  );
}
