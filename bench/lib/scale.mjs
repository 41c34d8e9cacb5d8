// GOBSTOPPER_BENCH_SMOKE=1 runs every benchmark on small inputs with one run each, so a test can
// check that each still loads, runs and passes its own checks in seconds. Its ratios say nothing
// about the targets, which are stated for the full sizes.
export const SMOKE = process.env.GOBSTOPPER_BENCH_SMOKE === '1';

/** `smoke` in a smoke run, else `full`. */
export function scaled(full, smoke) {
  return SMOKE ? smoke : full;
}
