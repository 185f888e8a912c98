import type { ErrorCode } from "../shared/runtime-error.js";

/** Seed 000: ids are echoed with their JSON type (a number stays a number). */
export type RequestId = string | number;

export interface Request {
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

/** The v1 wire error codes (seed 000); internal codes map onto these in error-frame.ts. */
export type V1ErrorCode = Exclude<ErrorCode, "invalid_params">;

export interface ErrorMessage {
  id: RequestId | null;
  type: "error";
  code: V1ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}
