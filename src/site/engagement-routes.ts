/**
 * GET /api/v1/announcements and POST /api/v1/client/heartbeat. Routes validate and delegate: the rules are in
 * announcements.ts and heartbeat-input.ts, the writes in the engagement services.
 */
import { Elysia } from "elysia";
import { corsOf } from "./cors";
import { whenReady } from "./document-cache";
import type { EngagementServices } from "./engagement-services";
import { readJsonObject } from "../http/body";
import { parseAnnouncementQuery } from "./announcements/announcements";
import { revalidatedBody } from "./revalidation";
import { CLIENT_ID_HEADER, HEARTBEAT_MAX_BODY_BYTES, heartbeatReply, parseHeartbeat } from "./heartbeats/heartbeat-input";

/** Repeated parameters stay arrays so the query parser can refuse them instead of picking one. */
function queryOf(request: Request): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URL(request.url).searchParams) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export interface EngagementRoutesDeps {
  engagement: Pick<EngagementServices, "announcements" | "heartbeats">;
  now: () => number;
}

export function engagementRoutes(deps: EngagementRoutesDeps) {
  const { announcements, heartbeats } = deps.engagement;
  const reply = JSON.stringify(heartbeatReply());
  return new Elysia({ name: "site-engagement" })
    .get("/api/v1/announcements", ({ request }) => {
      const doc = announcements.rendered(parseAnnouncementQuery(queryOf(request)));
      return whenReady(doc, (d) => revalidatedBody(request, d.body, d.etag));
    })
    .post(
      "/api/v1/client/heartbeat",
      async ({ request }) => {
        // Our own bounded read: malformed bodies get the error envelope and 16 KiB is plenty for a heartbeat. No body
        // at all is a heartbeat with no fields (the id in X-App-Client-ID); without the header it is missing_client_id.
        const { body } = await readJsonObject(request, HEARTBEAT_MAX_BODY_BYTES, { emptyIsObject: true });
        const record = parseHeartbeat(request.headers.get(CLIENT_ID_HEADER), body, deps.now());
        await heartbeats.record(record);
        return new Response(reply, {
          status: 200,
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...corsOf(request) },
        });
      },
      { parse: "none" },
    );
}
