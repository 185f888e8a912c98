/**
 * `--exit-on-stdin-eof`: a host that spawns a server with a pipe on stdin (and never writes to it)
 * tells it "I am gone" by closing that pipe, which the OS does for it when it dies, however it
 * dies (an Electron crash included, where no signal is sent and Windows has none to send). Whatever
 * arrives on stdin is read and discarded, so a host that writes cannot fill the pipe.
 * Returns the remover, which also lets go of stdin so it no longer keeps the process alive.
 */
export function onStdinEof(stdin: NodeJS.ReadableStream & { destroy?(): void }, onEof: () => void): () => void {
  let fired = false;
  const fire = (): void => {
    if (fired) return;
    fired = true;
    onEof();
  };
  const discard = (): void => undefined;
  stdin.on("data", discard);
  stdin.on("end", fire);
  stdin.on("close", fire);
  // A read error (EPIPE, a broken handle) means the same: nobody is on the other end any more.
  stdin.on("error", fire);
  stdin.resume();
  return () => {
    fired = true;
    stdin.off("data", discard);
    stdin.off("end", fire);
    stdin.off("close", fire);
    stdin.off("error", fire);
    stdin.destroy?.();
  };
}
