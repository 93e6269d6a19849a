/**
 * The CDK app (`cdk.json` runs it with tsx). A bad setting or alert config ends synth with one
 * clear message and exit code 1; the stack trace is left out, it would only hide the message.
 *
 * The settings are checked before the stack's modules load (aws-cdk-lib's constructs, cdk-nag, the
 * alert config's schema: about 2 CPU seconds), so a mistyped `-c` fails at once; defineApp reads
 * them again, as every caller of it does.
 */
import { App } from 'aws-cdk-lib';
import { readSettings } from './settings.ts';

const app = new App();
try {
  readSettings(app.node);
  const { defineApp } = await import('./stack.ts');
  defineApp(app);
} catch (error) {
  process.stderr.write(`exposure-alerts: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
app.synth();
