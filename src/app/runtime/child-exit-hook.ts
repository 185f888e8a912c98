import type { ChildRegistry } from "../../shared/process/child-registry.js";

/**
 * The last line of defence for children: when our process exits without the runtime's close()
 * having run (an uncaught exception, process.exit() elsewhere), kill every group still registered,
 * synchronously (an `exit` handler cannot wait). Returns the remover, called once close() has
 * stopped them properly.
 */
export function killChildrenOnExit(children: ChildRegistry, target: Pick<NodeJS.Process, "on" | "off"> = process): () => void {
  const onExit = (): void => children.killAll("SIGKILL");
  target.on("exit", onExit);
  return () => {
    target.off("exit", onExit);
  };
}
