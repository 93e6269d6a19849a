import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files that wait on real time (paces, timeouts, leases), start processes, synthesize the
 * stack or run the README: the `integration` project. Everything else is `unit`, the fast subset
 * (`npm run test:unit`) for the edit-test loop; `npm test` runs both.
 */
const INTEGRATION = [
  'test/cli/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/infra/**/*.test.ts',
  'test/functions/**/*.test.ts',
  'test/actions/events.test.ts',
  'test/api/silences.test.ts',
  'test/api/slack.test.ts',
  'test/api/tenants.test.ts',
  'test/deliver/delivery.test.ts',
  'test/deliver/follow-up.test.ts',
  'test/deliver/jira.test.ts',
  'test/deliver/digest-size.test.ts',
  'test/deliver/inline.test.ts',
  'test/deliver/pace.test.ts',
  'test/deliver/pagerduty.test.ts',
  'test/deliver/passwords-teams-pagerduty.test.ts',
  'test/deliver/passwords.test.ts',
  'test/deliver/rate-limit.test.ts',
  'test/deliver/teams.test.ts',
  'test/emulator/limits.test.ts',
  'test/poll/exactly-once.test.ts',
  'test/poll/faults.test.ts',
  'test/poll/heartbeat.test.ts',
  'test/poll/pipeline.test.ts',
  'test/poll/scale.test.ts',
  'test/poll/tenants-scale.test.ts',
  'test/state/governor.test.ts',
  'test/state/skew.test.ts',
  'test/state/status.test.ts',
  'test/upstream/client.contract.test.ts',
  'test/upstream/waits.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
    // Each test file in an empty folder of its own, without the caller's product variables.
    setupFiles: ['test/helpers/isolate.ts'],
    /**
     * One more worker than cores: most test time is spent waiting (on real paces, timeouts, other
     * processes), not computing. Vitest's default (cores − 1) ran the suite one file at a time on
     * a 2-core machine: 6 min 15 s; with three workers there, 2 min 40 s.
     */
    maxWorkers: availableParallelism() + 1,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/bench/**', 'node_modules/**', ...INTEGRATION],
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: INTEGRATION, exclude: ['test/bench/**', 'node_modules/**'] },
      },
    ],
  },
});
