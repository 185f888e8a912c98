// Loaded into a CLI under test with `--import` (peakRssEnv): on exit the process writes its peak
// resident memory (process.resourceUsage().maxRSS, in KiB: the kernel's own high-water mark) to
// $LOCAL_AI_TEST_PEAK_RSS_FILE, so a test reads the exact peak after the run instead of sampling.
import { writeFileSync } from "node:fs";

const file = process.env.LOCAL_AI_TEST_PEAK_RSS_FILE;
if (file !== undefined && file !== "") {
  process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
}
