/** The LimiterStore suite against the in-process default. */
import { InProcessLimiter } from "../../src/gateway/limits/limiter";
import { limiterConformance } from "./limiter.suite";

limiterConformance("in-process", async () => ({ limiter: new InProcessLimiter(), close() {} }));
