// The HTTP error contract moved to src/http/http-error.ts (every dialect maps from it).
export * from "../http-error.js";
