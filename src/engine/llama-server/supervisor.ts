// Keeps one llama-server alive for one model: a single loop launches it, watches it (exit or
// failed health checks), and relaunches with backoff. Repeated failures open the circuit
// breaker (callers then fail fast) and repeated start failures step down a degradation tier.
// Callers never drive the loop; they wait for "ready" through ensureReady().
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import type { CircuitState, EngineHealth, LoadProgress } from "../engine.js";
import { Backoff } from "./backoff.js";
import { CircuitBreaker } from "../circuit-breaker.js";
import { DegradationLadder, type LaunchShape } from "./degradation.js";
import { isConfigFailure, launchServer, type LaunchedServer } from "./launch.js";
import { watchServer } from "./health-watch.js";
import { LogTail } from "../../shared/process/log-tail.js";
import { errorExcerpt } from "./error-excerpt.js";
import { pidFilePath, removePidFile } from "./pid-file.js";
import type { ExitInfo, ServerProcess } from "./server-process.js";
import { delay as sleep, raceAbort } from "../../shared/abort.js";
import type { SupervisorTuning } from "./tuning.js";
import { residentBytes } from "../../shared/process/resident-bytes.js";
import type { ModelFileResolver } from "../model-file.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import type { HelpProbe } from "./help-probe.js";
import { newReadyWaiter, type ReadyWaiter } from "./ready-waiter.js";

export interface SupervisorConfig {
  modelName: string;
  binary: string;
  /** The configured `path` (shown on /health); the file launched comes from `modelFile` when given. */
  modelPath: string;
  /** The local file to launch (a reference's download); resolved before each launch. */
  modelFile?: ModelFileResolver;
  port: number;
  dataDir: string;
  threads: number;
  parallel: number;
  extraArgs: readonly string[];
  /** Launch with --reranking (llama.models.<name>.rerank). */
  rerank?: boolean;
  base: LaunchShape;
  logger: Logger;
  tuning: SupervisorTuning;
  children: ChildRegistry;
  helpProbe: HelpProbe;
}

function describeExit(exit: ExitInfo): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

export class ServerSupervisor {
  readonly pidFile: string;
  private readonly log: Logger;
  private readonly tail = new LogTail(200);
  private readonly breaker: CircuitBreaker;
  private readonly backoff: Backoff;
  private readonly ladder: DegradationLadder;
  private readonly lifetime = new AbortController();
  private readonly progressListeners = new Set<(progress: LoadProgress) => void>();
  private current: LaunchedServer | null = null;
  private child: ServerProcess | null = null;
  private waiter: ReadyWaiter | null = null;
  private looping = false;
  private loopDone: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private lastError: RuntimeError | null = null;
  private lastExit: ExitInfo | null = null;
  private restartReason: string | null = null;
  private restarts = 0;
  private lastStartupMs: number | null = null;
  private reapedPid: number | null = null;

  constructor(private readonly config: SupervisorConfig) {
    this.log = config.logger;
    this.pidFile = pidFilePath(config.dataDir, config.modelName);
    this.breaker = new CircuitBreaker({ ...config.tuning.breaker, onChange: (state) => this.logCircuit(state) });
    this.backoff = new Backoff(config.tuning.backoff);
    this.ladder = new DegradationLadder(config.base);
  }

  /** The ready server, starting it if needed. Aborting `signal` only stops this caller's wait. */
  async ensureReady(signal?: AbortSignal, onProgress?: (progress: LoadProgress) => void): Promise<LaunchedServer> {
    if (this.closing !== null) throw new RuntimeError("shutting_down", "The llama-server engine is closed");
    const current = this.current;
    if (current !== null && current.process.running) return current;
    if (!this.looping) {
      if (this.breaker.state === "open") throw this.circuitOpenError();
      this.looping = true;
      this.loopDone = this.runLoop();
    }
    this.waiter ??= newReadyWaiter();
    if (onProgress) this.progressListeners.add(onProgress);
    try {
      return await raceAbort(this.waiter.promise, signal);
    } catch (error) {
      if (signal?.aborted === true) throw new RuntimeError("cancelled", "Waiting for llama-server was cancelled", { cause: error });
      throw error;
    } finally {
      if (onProgress) this.progressListeners.delete(onProgress);
    }
  }

  /** Stops the current server so the loop relaunches it (e.g. a generation that would not stop). */
  requestRestart(server: LaunchedServer, reason: string): void {
    if (this.current !== server || !server.process.running) return;
    this.log.warn({ child_pid: server.process.pid, reason }, "restarting llama-server");
    this.restartReason = reason;
    void server.process.stop(this.config.tuning.stopGraceMs);
  }

  health(): EngineHealth {
    const circuit = this.breaker.state;
    const current = this.current !== null && this.current.process.running ? this.current : null;
    const info: Record<string, unknown> = {
      port: this.config.port,
      binary: this.config.binary,
      model_path: this.config.modelPath,
      pid: current?.process.pid ?? null,
      ctx_size: this.ladder.shape.ctxSize,
      gpu_layers: this.ladder.shape.gpuLayers,
      restarts: this.restarts,
      recent_failures: this.breaker.recentFailures,
      startup_ms: this.lastStartupMs,
      last_exit: this.lastExit,
      reaped_orphan_pid: this.reapedPid,
      stderr_tail: this.tail.lines(20),
    };
    const tier = this.ladder.tier;
    const base = { degradationTier: tier, circuit, info };
    if (this.closing !== null) return { ...base, state: "stopped", detail: "closed" };
    if (current !== null) {
      const rss = residentBytes(current.process.pid);
      const memory = rss === undefined ? {} : { memoryBytes: rss };
      return tier === "NORMAL" ? { ...base, ...memory, state: "ready" } : { ...base, ...memory, state: "degraded", detail: `serving on tier ${tier} after repeated start failures` };
    }
    if (this.looping) return { ...base, state: "starting", ...(this.lastError ? { detail: this.lastError.message } : {}) };
    if (circuit !== "closed") return { ...base, state: "down", detail: this.circuitOpenError().message };
    if (this.lastError !== null) return { ...base, state: "down", detail: this.lastError.message };
    return { ...base, state: "stopped" };
  }

  /** The last lines the child printed (doctor, errors). */
  outputTail(count = 20): string[] {
    return this.tail.lines(count);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.lifetime.abort(new RuntimeError("shutting_down", "The llama-server engine is closing"));
    this.settleWaiter(new RuntimeError("shutting_down", "The llama-server engine is closing"));
    const child = this.child;
    if (child !== null && child.running) {
      const result = await child.stop(this.config.tuning.stopGraceMs);
      this.log.info({ child_pid: child.pid, forced: result.forced }, "llama-server stopped");
    }
    await this.loopDone;
    if (child !== null) await removePidFile(this.pidFile, child.pid).catch(() => undefined);
    this.current = null;
  }

  private settleWaiter(outcome: LaunchedServer | RuntimeError): void {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter === null) return;
    if (outcome instanceof RuntimeError) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  /** Every transition is logged: operators (and the fault tests) follow the breaker by its log. */
  private logCircuit(state: CircuitState): void {
    const fields = { circuit: state, recent_failures: this.breaker.recentFailures, retry_in_ms: this.breaker.retryInMs };
    if (state === "open") this.log.warn(fields, "llama-server circuit open: callers fail fast until the cool-down ends");
    else this.log.info(fields, state === "half_open" ? "llama-server circuit half-open: one probe start" : "llama-server circuit closed");
  }

  private emitProgress(progress: LoadProgress): void {
    for (const listener of this.progressListeners) listener(progress);
  }

  private circuitOpenError(): RuntimeError {
    const retryIn = Math.ceil(this.breaker.retryInMs / 1000);
    const last = this.lastError?.message ?? "no error recorded";
    return new RuntimeError(
      "engine_unavailable",
      `llama-server for model "${this.config.modelName}" is unavailable: it failed repeatedly (circuit ${this.breaker.state}; next attempt in ${retryIn} s). Last error: ${last}`,
      { details: { circuit: this.breaker.state, retry_in_ms: this.breaker.retryInMs, stderr_tail: errorExcerpt(this.tail.lines()) } },
    );
  }

  /**
   * Ends the loop; waiters get `error`. Runs synchronously right before the loop returns.
   * lastError is left alone: it keeps the root cause that the circuit error quotes.
   */
  private giveUp(error: RuntimeError): void {
    this.settleWaiter(error);
  }

  private async runLoop(): Promise<void> {
    const { tuning } = this.config;
    const signal = this.lifetime.signal;
    try {
      while (!signal.aborted) {
        if (!this.breaker.tryAcquire()) return this.giveUp(this.circuitOpenError());
        let server: LaunchedServer;
        try {
          server = await this.launch();
        } catch (error) {
          if (signal.aborted) return;
          const failure = toRuntimeError(error);
          this.lastError = failure;
          if (isConfigFailure(failure)) return this.giveUp(failure);
          this.breaker.recordFailure();
          const stepped = this.ladder.recordStartFailure();
          this.log.warn({ err: failure.message, tier: this.ladder.tier, stepped, circuit: this.breaker.state }, "llama-server start failed");
          if (this.breaker.state !== "closed") return this.giveUp(this.circuitOpenError());
          await sleep(this.backoff.next(), signal);
          continue;
        }
        this.onReady(server);
        const reason = await this.watch(server);
        this.current = null;
        if (signal.aborted) return;
        this.restarts += 1;
        this.lastError = new RuntimeError("engine_unavailable", `llama-server ${reason}; restarting it`);
        this.log.warn({ child_pid: server.process.pid, reason, restarts: this.restarts }, "llama-server went down");
        if (Date.now() - server.readyAt >= tuning.stableAfterMs) {
          // A stable run ends the crash history: fresh backoff, and earlier failures no longer count.
          this.backoff.reset();
          this.breaker.recordSuccess();
        }
        this.breaker.recordFailure();
        if (this.breaker.state !== "closed") return this.giveUp(this.circuitOpenError());
        await sleep(this.backoff.next(), signal);
      }
    } catch (error) {
      if (!signal.aborted) {
        this.lastError = toRuntimeError(error);
        this.giveUp(this.lastError);
      }
    } finally {
      // Synchronous with the return above: a caller arriving next sees a stopped loop.
      this.looping = false;
    }
  }

  private async launch(): Promise<LaunchedServer> {
    const c = this.config;
    const modelPath = c.modelFile ? await c.modelFile({ signal: this.lifetime.signal, onProgress: (progress) => this.emitProgress(progress) }) : c.modelPath;
    return launchServer(
      {
        modelName: c.modelName,
        binary: c.binary,
        modelPath,
        port: c.port,
        threads: c.threads,
        parallel: c.parallel,
        extraArgs: c.extraArgs,
        rerank: c.rerank === true,
        pidFile: this.pidFile,
        tier: this.ladder.tier,
        shape: this.ladder.shape,
        startupIdleTimeoutMs: c.tuning.startupIdleTimeoutMs,
        maxStartupMs: c.tuning.maxStartupMs,
        stopGraceMs: c.tuning.stopGraceMs,
      },
      {
        logger: this.log,
        tail: this.tail,
        signal: this.lifetime.signal,
        onProgress: (progress) => this.emitProgress(progress),
        onSpawn: (child) => {
          this.child = child;
        },
        children: c.children,
        helpProbe: c.helpProbe,
      },
    );
  }

  private onReady(server: LaunchedServer): void {
    this.current = server;
    this.lastError = null;
    this.restartReason = null;
    this.lastStartupMs = server.startupMs;
    if (server.reapedPid !== null) this.reapedPid = server.reapedPid;
    // A start that works closes a half-open circuit, but does not erase the crashes before it:
    // a server that comes up and dies at once, again and again, is a crash loop the circuit stops.
    if (this.breaker.state !== "closed") this.breaker.recordSuccess();
    this.ladder.recordStarted();
    this.settleWaiter(server);
  }

  /** Resolves with why the server is gone: it exited, or it failed health checks and was stopped. */
  private async watch(server: LaunchedServer): Promise<string> {
    const { exit, unhealthy } = await watchServer(server, this.config.tuning, this.log);
    this.lastExit = exit;
    return unhealthy ?? (this.restartReason !== null ? `was restarted: ${this.restartReason}` : describeExit(exit));
  }
}
