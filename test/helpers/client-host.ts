import { LocalAiClient } from "../../src/client/index.js";

/**
 * A host process for the no-orphan test: starts LocalAiClient on the config given as argv[2],
 * starts a chat that does not stop by itself (agent `talker`), prints `{"pid": <local-ai pid>}`
 * once the first text arrives, then dies by SIGKILL without closing anything (a crashed host).
 */
const client = new LocalAiClient({ config: process.argv[2] ?? "", env: { LOCAL_AI_LOG_LEVEL: "warn" } });
await client.start();
const turn = client.chat({ session_id: "orphan", agent: "talker", input: "Tell me everything" });
for await (const event of turn) {
  if (event.event === "llm_chunk") {
    process.stdout.write(`${JSON.stringify({ pid: client.pid })}\n`, () => process.kill(process.pid, "SIGKILL"));
    break;
  }
}
