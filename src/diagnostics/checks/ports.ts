import net from "node:net";
import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok, warn } from "../check-result.js";

interface PortUse {
  id: string;
  title: string;
  host: string;
  port: number;
  /** The config key a user changes to move this listener. */
  key: string;
  owner: string;
}

/**
 * Every port we would bind: http.port, and each model's ports as its driver lists them (the port
 * of each llama-server model, on loopback).
 *
 * A port in use is a warning, not a failure: the usual reason is a local-ai server that is
 * already running, and doctor must not report a healthy, running setup as broken. A port we can
 * never bind (privileged, or a host that is not ours) and two listeners configured on the same
 * port are failures, because no restart fixes them.
 */
export async function checkPorts(config: Config): Promise<CheckResult[]> {
  const uses: PortUse[] = [
    { id: "port.http", title: "HTTP port", host: config.http.host, port: config.http.port, key: "http.port", owner: "serve-http" },
    ...Object.entries(config.llama.models).flatMap(([name, model]) =>
      driverOf(model)
        .ports(name, model)
        .map((use) => ({ id: `port.model.${name}`, title: `Port of model ${name}`, ...use })),
    ),
  ];
  return Promise.all(uses.map((use) => checkPort(use, uses)));
}

async function checkPort(use: PortUse, all: readonly PortUse[]): Promise<CheckResult> {
  const where = `${use.host}:${use.port}`;
  const data = { host: use.host, port: use.port, key: use.key };
  // The schema only compares models with http.port; two models on one port would collide at spawn.
  const clash = all.find((other) => other !== use && other.port === use.port && sameHost(other.host, use.host));
  if (clash !== undefined) {
    return fail(use.id, use.title, `${use.key} and ${clash.key} are both ${use.port}`, `give ${use.key} a port of its own`, data);
  }
  const error = await tryListen(use.host, use.port);
  if (error === null) return ok(use.id, use.title, `${where} is free (${use.owner})`, data);
  const code = error.code;
  if (code === "EADDRINUSE") {
    return warn(
      use.id,
      use.title,
      `${where} is already in use (a local-ai that is already running, or another program)`,
      `if that is not a running local-ai, stop the program holding ${use.port} or set ${use.key} to a free port`,
      data,
    );
  }
  if (code === "EACCES" || code === "EPERM") {
    return fail(use.id, use.title, `not allowed to listen on ${where}`, `set ${use.key} to a port above 1023 (lower ports need administrator rights)`, data);
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return fail(use.id, use.title, `${use.host} is not an address of this machine (${code})`, `set ${use.key === "http.port" ? "http.host" : use.key} to a local address such as 127.0.0.1`, data);
  }
  return fail(use.id, use.title, `cannot listen on ${where}: ${firstLine(error.message)}`, `set ${use.key} to a free port`, data);
}

function sameHost(a: string, b: string): boolean {
  const wildcard = (host: string): boolean => host === "0.0.0.0" || host === "::";
  return a === b || wildcard(a) || wildcard(b);
}

/** Binds and immediately closes: the only reliable "is it free" test (connect() misses wildcard binds). */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() => resolve(null));
    });
  });
}
