/** The PoolStateStore suite against the in-process store (one instance without Redis). */
import { MemoryPoolState } from "../../src/gateway/upstream/pool-state-memory";
import { poolStateConformance } from "./pool-state.suite";

poolStateConformance("in process", async (clock) => ({ store: new MemoryPoolState(clock.now), close() {} }));
