/** Resolves once the text is handed to the OS, so a piped reader gets all of it before exit. */
export function writeOut(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error === undefined || error === null ? resolve() : reject(error)));
  });
}
