/** Version, commit and build date: replaced at build time by build.ts (`--define`), read from the checkout otherwise. */
declare const GANTRY_VERSION: string | undefined;
declare const GANTRY_COMMIT: string | undefined;
declare const GANTRY_BUILD_DATE: string | undefined;

import pkg from "../package.json";

export const VERSION = typeof GANTRY_VERSION === "string" ? GANTRY_VERSION : pkg.version;
export const COMMIT = typeof GANTRY_COMMIT === "string" ? GANTRY_COMMIT : "source";
export const BUILD_DATE = typeof GANTRY_BUILD_DATE === "string" ? GANTRY_BUILD_DATE : "unbuilt";
export const VERSION_TEXT = `gantry ${VERSION} (commit ${COMMIT}, built ${BUILD_DATE})`;
