/**
 * Electron is not a dependency of local-ai-core, and its types are not installed here, so this
 * declares the few Electron APIs examples/electron-main.ts uses, with Electron's own signatures
 * (reduced to what the example calls). In an app with `electron` installed, delete this file:
 * Electron's own electron.d.ts takes over and the example compiles unchanged.
 */
declare module "electron" {
  interface WebContents {
    send(channel: string, ...args: unknown[]): void;
  }
  interface IpcMainInvokeEvent {
    readonly sender: WebContents;
  }
  interface Event {
    preventDefault(): void;
  }
  export const app: {
    whenReady(): Promise<void>;
    getPath(name: "userData" | "logs"): string;
    getName(): string;
    getVersion(): string;
    on(event: "will-quit", listener: (event: Event) => void): void;
    on(event: "window-all-closed", listener: () => void): void;
    quit(): void;
    exit(exitCode?: number): void;
  };
  export class BrowserWindow {
    constructor(options?: { width?: number; height?: number; webPreferences?: { preload?: string } });
    readonly webContents: WebContents;
    loadFile(filePath: string): Promise<void>;
  }
  export const ipcMain: {
    // any[]: Electron's own signature (the renderer sends whatever it sends).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: any[]) => unknown): void;
  };
}
