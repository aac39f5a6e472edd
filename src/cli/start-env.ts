/**
 * Imported first by main.ts, so that it runs before the rest of the program loads: a server command lacking a
 * setting Bun reads only at start re-executes itself at once (bun-start-env.ts), before anything is opened.
 */
import { ensureStartEnv } from "./bun-start-env";

ensureStartEnv();
