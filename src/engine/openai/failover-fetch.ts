// Failover between several endpoints of one `openai` model (`base_url` as a list): a request goes
// to the first endpoint whose circuit is not open; when that endpoint cannot be reached (the
// connection fails, nothing answered) the same request goes to the next. Any HTTP answer, 4xx and
// 5xx included, is the answer: the endpoint is up, and another replica would only repeat it.
// Not load balancing: the first reachable endpoint takes every request.
import type { Logger } from "../../logging/create-logger.js";
import type { CircuitState } from "../engine.js";
import { CircuitBreaker, DEFAULT_BREAKER_OPTIONS, type CircuitBreakerOptions } from "../circuit-breaker.js";

export interface EndpointState {
  base_url: string;
  circuit: CircuitState;
}

interface Endpoint {
  baseUrl: string;
  breaker: CircuitBreaker;
}

const trimmed = (url: string): string => url.replace(/\/+$/, "");

/**
 * A `fetch` for the OpenAI client, whose base URL is the first endpoint: each request is sent to
 * the endpoints in order (the path after the base URL kept), skipping those whose circuit is
 * open. Each endpoint has its own breaker (the llama-server one): connection failures count,
 * an answer closes it.
 */
export class FailoverFetch {
  private readonly endpoints: Endpoint[];

  constructor(
    baseUrls: readonly string[],
    private readonly logger: Logger,
    private readonly inner: typeof fetch = fetch,
    breaker: Omit<CircuitBreakerOptions, "onChange"> = DEFAULT_BREAKER_OPTIONS,
  ) {
    this.endpoints = baseUrls.map((baseUrl) => ({
      baseUrl: trimmed(baseUrl),
      breaker: new CircuitBreaker({ ...breaker, onChange: (state) => this.logger.warn({ baseUrl, circuit: state }, "openai endpoint circuit changed") }),
    }));
  }

  states(): EndpointState[] {
    return this.endpoints.map(({ baseUrl, breaker }) => ({ base_url: baseUrl, circuit: breaker.state }));
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const first = this.endpoints[0]!.baseUrl;
    // The client only ever asks for URLs under its base URL (the first endpoint).
    const path = url.startsWith(first) ? url.slice(first.length) : null;
    if (path === null) return this.inner(input, init);
    const failures: string[] = [];
    for (const { baseUrl, breaker } of this.endpoints) {
      if (!breaker.tryAcquire()) {
        failures.push(`${baseUrl}: circuit open (retry in ${Math.ceil(breaker.retryInMs / 1000)} s)`);
        continue;
      }
      try {
        const response = await this.inner(`${baseUrl}${path}`, init);
        breaker.recordSuccess();
        return response;
      } catch (error) {
        // The caller gave up: not the endpoint's fault, and no other endpoint is wanted.
        if (init?.signal?.aborted === true) {
          breaker.recordSuccess();
          throw error;
        }
        breaker.recordFailure();
        failures.push(`${baseUrl}: ${describe(error)}`);
        this.logger.warn({ baseUrl, err: describe(error) }, "openai endpoint unreachable; trying the next");
      }
    }
    throw new TypeError(`no endpoint could be reached: ${failures.join("; ")}`);
  };
}

/** undici hides the reason (ECONNREFUSED...) in `cause`. */
function describe(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}
