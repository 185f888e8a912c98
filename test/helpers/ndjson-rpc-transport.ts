import type { Readable, Writable } from "node:stream";
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message } from "vscode-jsonrpc/node";

/**
 * vscode-jsonrpc speaks Content-Length framing by default; seed 003 is newline-delimited. These
 * two small adapters give the library NDJSON framing, and the library does the rest (id matching,
 * notifications, `$/cancelRequest` from cancellation tokens, error objects).
 */
export class NdjsonMessageReader extends AbstractMessageReader {
  constructor(private readonly input: Readable) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    let partial = "";
    const onData = (chunk: Buffer | string): void => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") callback(JSON.parse(line) as Message);
    };
    const onClose = (): void => this.fireClose();
    this.input.on("data", onData);
    this.input.on("close", onClose);
    return { dispose: () => (this.input.off("data", onData), this.input.off("close", onClose)) };
  }
}

export class NdjsonMessageWriter extends AbstractMessageWriter {
  constructor(private readonly output: Writable) {
    super();
  }

  write(message: Message): Promise<void> {
    return new Promise((resolve, reject) => this.output.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve())));
  }

  end(): void {
    this.output.end();
  }
}
