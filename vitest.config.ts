// Test configuration: one real Postgres for the run (see test/support/global-setup.ts).
// `npm test` runs everything but the fault-injection suite; `npm run test:faults` runs only it.
import { configDefaults, defineConfig } from "vitest/config";

const faults = process.env.WARREN_TEST_FAULTS === "1";

export default defineConfig({
  test: {
    include: faults ? ["test/faults/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: faults ? configDefaults.exclude : [...configDefaults.exclude, "test/faults/**"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
