// A minimal Electron main process hosting local-ai through its client (see docs/embedding.md).
// Type-checked by `npm run typecheck` (examples/tsconfig.json), never run by the tests.
import { app, BrowserWindow, ipcMain } from "electron";
import path from "node:path";
import { LocalAiClient, LocalAiError } from "local-ai-core/client";

// The child runs this Electron binary as Node (the client sets ELECTRON_RUN_AS_NODE=1), from the
// unpacked copy of local-ai-core when the app is packaged with asar (see the asarUnpack settings).
const client = new LocalAiClient({
  config: path.join(app.getPath("userData"), "config.yaml"),
  clientInfo: { name: app.getName(), version: app.getVersion() },
  restart: { maxRestarts: 5 },
});

let window: BrowserWindow | null = null;
/** The chats the renderer may cancel, by request id. */
const running = new Map<string, AbortController>();

// Tell the UI when the core dies and comes back; log records go wherever the app logs.
client.on("exit", (info) => window?.webContents.send("core:exit", { code: info.exit_code, signal: info.signal, restart_in_ms: info.restart_in_ms }));
client.on("restart", (info) => window?.webContents.send("core:restart", { attempt: info.attempt }));
client.on("log", (record) => {
  if (record.level === "error" || record.level === "fatal") window?.webContents.send("core:log", record.msg);
});

// One chat: stream the text to the renderer, answer with the final response (null if cancelled).
ipcMain.handle("chat", async (event, input: string, sessionId: string) => {
  const controller = new AbortController();
  const turn = client.chat({ input, session_id: sessionId }, { signal: controller.signal });
  running.set(turn.id, controller);
  event.sender.send("chat:started", turn.id);
  try {
    for await (const chunk of turn) {
      if (chunk.event === "llm_chunk") event.sender.send("chat:delta", turn.id, chunk.delta);
      if (chunk.event === "tool_start") event.sender.send("chat:tool", turn.id, chunk.tool);
    }
    return (await turn.result).response;
  } catch (error) {
    if (error instanceof LocalAiError && error.code === "cancelled") return null;
    throw error;
  } finally {
    running.delete(turn.id);
  }
});

// The cancel button.
ipcMain.handle("chat:cancel", (_event, id: string) => running.get(id)?.abort());

void app.whenReady().then(async () => {
  const init = await client.start();
  window = new BrowserWindow({ width: 900, height: 700, webPreferences: { preload: path.join(import.meta.dirname, "preload.js") } });
  await window.loadFile("index.html");
  window.webContents.send("core:ready", init.server.version);
});

app.on("window-all-closed", () => app.quit());

// Let local-ai finish what it is doing (bounded), then quit. Without this it still exits on its
// own when the app is gone (its stdin closes), but a clean shutdown closes its children first.
let quitting = false;
app.on("will-quit", (event) => {
  if (quitting) return;
  quitting = true;
  event.preventDefault();
  void client.close().finally(() => app.exit(0));
});
