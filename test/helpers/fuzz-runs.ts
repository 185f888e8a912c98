/**
 * How many cases each property runs. `npm test` keeps them modest (2-core CI); `npm run
 * test:stress` sets LOCAL_AI_STRESS=1 and runs many more. A failing seed is printed by fast-check
 * and can be replayed with FC_SEED.
 */
export function fuzzRuns(quick: number, stress = quick * 20): number {
  return process.env.LOCAL_AI_STRESS === "1" ? stress : quick;
}

/** fast-check parameters shared by every fuzz test. */
export function fuzzParams(quick: number, stress?: number): { numRuns: number; seed?: number } {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return { numRuns: fuzzRuns(quick, stress), ...(seed === undefined ? {} : { seed }) };
}
