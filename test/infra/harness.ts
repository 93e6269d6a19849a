/**
 * Builds the app the way `cdk synth` does (infra/stack.ts defineApp, cdk-nag included) with the
 * example alert config, skipping esbuild so a template test takes a second, not ten.
 *
 * The CDK's own CloudFormation rules (its built-in validation, on at every real synth) run only
 * where a test asks (`validate`): in this app their findings are warnings, never a failed synth,
 * and their WebAssembly engine took half of a template test's time (about 9 CPU seconds for its
 * first run in a process), loaded again in each test file. Only the real synth asks
 * (synth.test.ts): its report, which must list only cdk-nag's two packs, would list any finding
 * of theirs.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { defineApp, type ExposureAlertsStack } from '../../infra/stack.ts';

export const EXAMPLE_CONFIG = join(PROJECT_ROOT, 'infra', 'alerts.config.example.json');

export interface Built {
  app: App;
  stack: ExposureAlertsStack;
  outdir: string;
}

export interface BuildOptions {
  /** Bundle the functions with esbuild, as a real synth does. */
  bundle?: boolean;
  /** Run the CDK's built-in CloudFormation rules at synth, as a real synth does. */
  validate?: boolean;
}

/** The app with `context` over the example config; bundling and the CDK's CloudFormation rules skipped unless asked. */
export function build(context: Record<string, unknown> = {}, options: BuildOptions = {}): Built {
  const outdir = mkdtempSync(join(tmpdir(), 'exposure-alerts-cdk-'));
  const app = new App({
    outdir,
    builtinCloudFormationValidation: options.validate ?? false,
    context: {
      alertsConfig: EXAMPLE_CONFIG,
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...context,
    },
  });
  return { app, stack: defineApp(app), outdir };
}

let exampleTemplate: (Template & { built: Built }) | undefined;

/**
 * Synthesizes (cdk-nag runs here and throws on any unacknowledged finding) and returns the template.
 * Without context, the example's template is synthesized once per process and shared: a Template
 * is only read, and the files that read it share a process (stack.test.ts runs least-privilege.ts).
 */
export function template(context: Record<string, unknown> = {}): Template & { built: Built } {
  const example = Object.keys(context).length === 0;
  if (example && exampleTemplate) return exampleTemplate;
  const built = build(context);
  const t = Object.assign(Template.fromStack(built.stack), { built });
  if (example) exampleTemplate = t;
  return t;
}

export interface NagReport {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: { ruleName: string }[];
    suppressedViolations: {
      ruleName: string;
      acknowledgedId: string;
      acknowledgedAt: string;
      reason: string;
      violatingConstructs: { constructPath: string }[];
    }[];
  }[];
}

/** The validation report CDK writes beside the templates after the plugins ran. */
export function nagReport(outdir: string): NagReport {
  return JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as NagReport;
}

type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

/** Every statement of the identity policies attached to the role whose logical id starts with `rolePrefix`. */
export function statementsOf(t: Template, rolePrefix: string): Statement[] {
  const policies = t.findResources('AWS::IAM::Policy');
  const out: Statement[] = [];
  for (const policy of Object.values(policies)) {
    const roles = (policy.Properties.Roles as { Ref: string }[]).map((r) => r.Ref);
    if (!roles.some((r) => r.startsWith(rolePrefix))) continue;
    out.push(...(policy.Properties.PolicyDocument.Statement as Statement[]));
  }
  return out;
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** The logical id of the only resource of `type` whose id starts with `prefix`. */
export function logicalId(t: Template, type: string, prefix: string): string {
  const ids = Object.keys(t.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} named ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}
