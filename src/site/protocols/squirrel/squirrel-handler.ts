/**
 * Squirrel's endpoints: Squirrel.Mac's `/update/squirrel-mac/{arch}/{version}` (204, or the zip to install), and
 * Squirrel.Windows' `/update/squirrel-windows/{arch}/RELEASES`. An app that sets `X-App-Client-ID` among the
 * autoUpdater's headers (Squirrel.Mac), or `client_id` in its feed URL's query (Squirrel.Windows, which sends no
 * headers of the app's), is placed in staged rollouts by that id; the version it runs (the URL's, or Squirrel.Windows'
 * `localVersion`) decides a paused rollout, and the check counts the id as online with that version.
 */
import { publicBaseUrl } from "../../../http/public-url";
import { renderText, whenReady, type RenderedDocument } from "../../http/document-cache";
import { pickRendered } from "../../releases/document-variants";
import { readParam } from "../../http/rules/query-params";
import { rolloutClientId } from "../../releases/rules/rollout";
import { isValidVersion } from "../../releases/rules/versions";
import { documentReply } from "../../http/revalidation";
import { feedNotFound, renderOffers, type FeedContext } from "../shared/feed-context";
import { planOffer } from "../rules/offer";
import { countUpdateCheck } from "../shared/update-check";
import { CLIENT_ID_HEADER, versionCheckReply } from "../shared/version-check";
import { buildSquirrelMacUpdate, parseSquirrelMacRequest, squirrelMacZip } from "./rules/squirrel-mac";
import { buildReleasesFile, parseSquirrelWindowsArch, squirrelPackages } from "./rules/squirrel-windows";

const TEXT = "text/plain; charset=utf-8";

export function squirrelHandlers(ctx: FeedContext) {
  const { deps, documents, reportedVersion } = ctx;
  return {
    mac(request: Request, arch: string, version: string): Response | Promise<Response> {
      const q = parseSquirrelMacRequest(arch, version);
      const baseUrl = publicBaseUrl(request, deps.config);
      const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER));
      if (clientId !== null) countUpdateCheck(deps, null, { clientId, version: version.slice(0, 64), platform: "macos", arch: q.arch, runtime: "squirrel-mac" });
      return versionCheckReply(ctx, request, {
        key: `squirrel-mac\n${baseUrl}\n${q.arch}`,
        pick: (r) => squirrelMacZip(r, q.arch),
        build: (r, zip) => buildSquirrelMacUpdate(r, zip, baseUrl),
        clientId,
        current: version,
      });
    },

    windows(request: Request, arch: string, query: Record<string, unknown>): Response | Promise<Response> {
      const a = parseSquirrelWindowsArch(arch);
      const baseUrl = publicBaseUrl(request, deps.config);
      const clientId = rolloutClientId(request.headers.get(CLIENT_ID_HEADER) ?? readParam(query, "client_id"));
      const local = readParam(query, "localVersion");
      const running = isValidVersion(local) ? local : null;
      if (clientId !== null) countUpdateCheck(deps, null, { clientId, version: running, platform: "windows", arch: a, runtime: "squirrel-windows" });
      const variants = documents.getValue(`squirrel-windows\n${baseUrl}\n${a}`, async () =>
        renderOffers(planOffer(await deps.releases.offered(), (r) => squirrelPackages(r, a)), (_r, packages) => buildReleasesFile(packages, baseUrl), (body) => renderText(body as string | null, TEXT)),
      );
      return whenReady(variants, (v) => {
        const vary = v.staged.length > 0 ? CLIENT_ID_HEADER : undefined;
        const reply = (doc: RenderedDocument) => (doc.empty ? feedNotFound(request, "No release has a full package (-full.nupkg) for this feed yet.", vary) : documentReply(request, doc, vary));
        const doc = vary ? pickRendered(v, clientId, async (id) => running ?? (await reportedVersion(id))) : v.base;
        return doc instanceof Promise ? doc.then(reply) : reply(doc);
      });
    },
  };
}
