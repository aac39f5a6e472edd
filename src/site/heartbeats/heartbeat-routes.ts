/**
 * POST /api/v1/client/heartbeat. The route validates and delegates: the rules are in heartbeat-input.ts, the
 * writes in the engagement services. GET /api/v1/announcements is a site document (site-documents.ts).
 */
import { Elysia } from "elysia";
import { corsOf } from "../http/cors";
import type { HeartbeatGate } from "./heartbeat-gate";
import type { HeartbeatService } from "./heartbeat-service";
import { readJsonObject } from "../../http/body";
import { clientAddress } from "../../http/client-address";
import { CLIENT_ID_HEADER, HEARTBEAT_MAX_BODY_BYTES, heartbeatReply, parseHeartbeat } from "./rules/heartbeat-input";

export interface HeartbeatRoutesDeps {
  /** Declared here, not taken from the site's engagement bundle, so the feature does not import the composition above it. */
  engagement: { heartbeats: HeartbeatService; heartbeatGate: HeartbeatGate };
  now: () => number;
}

export function heartbeatRoutes(deps: HeartbeatRoutesDeps) {
  const { heartbeats, heartbeatGate } = deps.engagement;
  const reply = JSON.stringify(heartbeatReply());
  return new Elysia({ name: "site-engagement" })
    .post(
      "/api/v1/client/heartbeat",
      async ({ request }) => {
        // Our own bounded read: malformed bodies get the error envelope and 16 KiB is plenty for a heartbeat. No body
        // at all is a heartbeat with no fields (the id in X-App-Client-ID); without the header it is missing_client_id.
        const { body } = await readJsonObject(request, HEARTBEAT_MAX_BODY_BYTES, { emptyIsObject: true });
        const record = parseHeartbeat(request.headers.get(CLIENT_ID_HEADER), body, deps.now());
        // Unauthenticated: storage kept for billing, then per-address limits, before anything is written.
        await heartbeatGate.admit(clientAddress(request), record.clientId);
        await heartbeats.record(record);
        return new Response(reply, {
          status: 200,
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...corsOf(request) },
        });
      },
      { parse: "none" },
    );
}
