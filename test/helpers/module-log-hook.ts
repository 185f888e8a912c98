import { register } from "node:module";

/**
 * Test-only `--import` hook (via NODE_OPTIONS): registers module-log-loader.js, which appends every
 * resolved module URL to the file named by LOCAL_AI_TEST_MODULE_LOG. Used by cold-start.test.ts
 * to see which modules serve-stdio loaded before it answered.
 */
register("./module-log-loader.js", import.meta.url);
