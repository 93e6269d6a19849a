import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Which project a test file belongs to follows from where it is and what it is called, never from
 * a list: a test that waits on real time (paces, timeouts, leases) or starts processes is named
 * `<name>.int.test.ts`, wherever it lives, and every test under the folders below (the CLI as a
 * process, the README run, the stack synthesized, the Lambda handlers) is one too. These are the
 * `integration` project. Everything else is `unit`, the fast subset (`npm run test:unit`, about
 * 30 s) for the edit-test loop; `npm test` runs both. A test moved keeps its project by keeping its
 * name.
 *
 * Of those, the files below get a process per file (the `own-process` project): they run esbuild
 * (the stack's bundles, the console's page), a browser, or a Lambda handler that keeps its cold
 * start in its module, which the next file in a shared worker would find. The other files of
 * test/infra synthesize without bundling: they are the `infra` project, whose workers they share.
 */
const INTEGRATION_FOLDERS = ['cli', 'docs', 'infra', 'functions'];
const INTEGRATION = ['test/**/*.int.test.ts', ...INTEGRATION_FOLDERS.map((f) => `test/${f}/**/*.test.ts`)];
const OWN_PROCESS = [
  'test/infra/synth.test.ts',
  'test/functions/**/*.test.ts',
  'test/console/**/*.int.test.ts',
];
const INFRA = ['test/infra/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    /**
     * These machines and CI run Node.js 20, which the product supports; the AWS SDK's notice that
     * its 2027 releases need Node.js 22 would otherwise print in every process that loads it.
     * Child processes (the CLI, npm start) inherit it.
     */
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
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
          /**
           * The unit files share their worker's module cache instead of a fresh process each: the
           * process and imports took half the project's CPU (about 60 s against 30 s on 2 cores).
           * Safe because a unit test mocks no module, each file still gets its own folder and an
           * environment cleared of the product's variables (setupFiles run per file), and what a module of
           * the product keeps (token and spacing per Entra sign-in address, caches of pure results)
           * is keyed by the stand-in a test started on its own port. A test that needs a module
           * to itself, or starts esbuild, belongs in the integration project (test/shape.test.ts
           * finds one that does not).
           */
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: ['test/bench/**', 'node_modules/**', ...INTEGRATION],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          /**
           * Shared workers, as the unit files have: a process and its imports per file were about
           * 40% of these files' CPU (12 CLI files: 22 s of CPU a process each, 13 s shared). Safe
           * for the same reasons (no module mocked, each file its own folder and environment, the
           * shape test checks); what each file starts (processes, servers, dynalite) it stops.
           */
          isolate: false,
          include: INTEGRATION,
          exclude: ['test/bench/**', 'node_modules/**', ...OWN_PROCESS, ...INFRA],
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          /**
           * A project of their own, not the integration one: each of these files loads aws-cdk-lib
           * and the stack's modules and warms them with a first synth (about 4 CPU seconds in a
           * process of its own, 0.3 s for each later synth in the same process), and their heaps
           * of constructs leave with their workers instead of staying in the integration
           * project's for the rest of the run.
           */
          isolate: false,
          include: INFRA,
          exclude: ['test/bench/**', 'node_modules/**', ...OWN_PROCESS],
        },
      },
      {
        extends: true,
        test: { name: 'own-process', include: OWN_PROCESS, exclude: ['test/bench/**', 'node_modules/**'] },
      },
    ],
  },
});
