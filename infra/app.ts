/**
 * The CDK app (`cdk.json` runs it with tsx). A bad setting or alert config ends synth with one
 * clear message and exit code 1; the stack trace is left out, it would only hide the message.
 */
import { App } from 'aws-cdk-lib';
import { defineApp } from './stack.ts';

const app = new App();
try {
  defineApp(app);
} catch (error) {
  process.stderr.write(`exposure-alerts: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
app.synth();
