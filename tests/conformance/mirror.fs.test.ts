/** The Mirror suite against the file-system default. */
import { join } from "node:path";
import { FileSystemMirror } from "../../src/store/files/fs-mirror";
import { tempDirs } from "../support/temp-dirs";
import { mirrorConformance } from "./mirror.suite";

const tempDir = tempDirs();

mirrorConformance("file system", async () => ({ mirror: new FileSystemMirror(join(tempDir("mirror"), "mirror")), close() {} }));
