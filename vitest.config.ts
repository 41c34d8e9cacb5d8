import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // @oclif/core writes through console.log; interception would hide command output.
    disableConsoleIntercept: true,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The host re-validates the requests it sends to plugins (off in production for speed).
    env: { GOBSTOPPER_CHECK_REQUESTS: '1' },
  },
});
