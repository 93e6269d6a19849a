/**
 * One CloudWatch dashboard, so ops can see the system without writing a query: per stream, the
 * poll lag, new items and quarantined items; per tenant (a config's `tenants`), the poll lag of its
 * worst stream; per destination, deliveries sent and dead; the global-search quota; and with
 * identity providers, per provider the lookups, failed lookups and refusals, and the verdicts. Only metrics the product already emits (lib/metrics.ts, EMF, namespace
 * ExposureAlerts): each worker publishes them under its `service` (`poll-events`,
 * `poll-credentials`), with the `stream` or `destination` dimension as well. The streams and
 * destinations are the alert config's, known at synth; a deploy with another config redraws it.
 *
 * Both workers deliver, so a destination's figures are the sum of the two services'. A graph holds
 * at most LINES_PER_GRAPH lines (more streams make more graphs), to stay readable and within
 * CloudWatch's limits on metrics per widget.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { VERDICTS, verdictWords } from '../lib/identity/words.ts';
import { dimensionValues, METRICS_NAMESPACE } from '../lib/metrics.ts';
import { streamIds } from '../lib/poll/turn.ts';
import type { AlertsConfig } from '../lib/rules/config.ts';
import { identityProvidersOf } from '../lib/state/catalog.ts';
import type { PollerKind } from './schedule.ts';

export const LINES_PER_GRAPH = 25;
const PERIOD = Duration.minutes(5);
const KINDS: PollerKind[] = ['events', 'credentials'];

function metric(
  name: string,
  service: string,
  dimensions: Record<string, string>,
  statistic: string,
  label: string,
) {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    // As the product writes them: escaped to printable ASCII and cut to fit.
    dimensionsMap: dimensionValues({ service, ...dimensions }),
    statistic,
    period: PERIOD,
    label,
  });
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/**
 * A destination's figure from both workers, summed (no data from one counts as zero). `n` keeps
 * the ids of its two metrics apart from the other destinations' in the same graph.
 */
function bothServices(name: string, destination: string, n: number): IMetric {
  const [events, credentials] = KINDS.map((kind) =>
    metric(name, `poll-${kind}`, { destination }, 'Sum', `${destination} (${kind})`),
  );
  return new MathExpression({
    expression: `FILL(e${n}, 0) + FILL(c${n}, 0)`,
    usingMetrics: { [`e${n}`]: events as Metric, [`c${n}`]: credentials as Metric },
    label: destination,
    period: PERIOD,
  });
}

function graphs(title: string, lines: IMetric[], width = 12): GraphWidget[] {
  const parts = chunks(lines, LINES_PER_GRAPH);
  return parts.map(
    (left, i) =>
      new GraphWidget({
        title: parts.length > 1 ? `${title} (${i + 1}/${parts.length})` : title,
        left,
        width,
        height: 6,
      }),
  );
}

/** The dashboard of `config`'s streams and destinations; its name is `<stack name>-overview`. */
export function addDashboard(scope: Construct, config: AlertsConfig): Dashboard {
  const stack = Stack.of(scope);
  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: `${stack.stackName}-overview`,
    defaultInterval: Duration.hours(24),
  });
  const streams = KINDS.flatMap((kind) => streamIds(config, kind).map((stream) => ({ kind, stream })));
  const perStream = (name: string, statistic: string) =>
    streams.map(({ kind, stream }) => metric(name, `poll-${kind}`, { stream }, statistic, stream));
  const destinations = Object.keys(config.destinations);
  dashboard.addWidgets(
    new TextWidget({
      markdown: [
        '# exposure-alerts',
        'Per stream: poll lag (how old the newest item a poll saw was), new items, quarantined items.',
        'Per destination: deliveries sent and dead (`exposure-alerts deliveries list --status dead`).',
        'At a glance from a terminal: `exposure-alerts status`.',
      ].join('\n\n'),
      width: 24,
      height: 3,
    }),
  );
  dashboard.addWidgets(...graphs('Poll lag (seconds, maximum)', perStream('PollLagSeconds', 'Maximum')));
  // Each tenant's worst stream, one line a tenant (docs/configuration.md).
  const tenants = config.tenants ?? [];
  if (tenants.length)
    dashboard.addWidgets(
      ...graphs(
        'Poll lag by tenant (seconds, maximum)',
        tenants.flatMap((t) =>
          KINDS.map((kind) =>
            metric(
              'PollLagSeconds',
              `poll-${kind}`,
              { tenant: String(t.id) },
              'Maximum',
              `${t.name} (${kind})`,
            ),
          ),
        ),
      ),
    );
  dashboard.addWidgets(...graphs('New items', perStream('NewItems', 'Sum')));
  dashboard.addWidgets(...graphs('Quarantined items', perStream('QuarantinedItems', 'Sum')));
  dashboard.addWidgets(
    ...graphs(
      'Deliveries sent',
      destinations.map((d, n) => bothServices('DeliveriesSent', d, n)),
    ),
    ...graphs(
      'Deliveries dead',
      destinations.map((d, n) => bothServices('DeliveriesDead', d, n)),
    ),
  );
  const quota = metric(
    'GlobalSearchQuotaRemaining',
    'poll-credentials',
    {},
    'Minimum',
    'global searches left',
  );
  dashboard.addWidgets(
    new GraphWidget({ title: 'Global-search quota remaining', left: [quota], width: 18, height: 6 }),
    new SingleValueWidget({ title: 'Quota now', metrics: [quota], width: 6, height: 6 }),
  );
  addIdentityWidgets(dashboard, config);
  return dashboard;
}

/**
 * With identity providers: per provider its lookups, failed lookups and refusals, and the verdicts
 * given, from the credentials worker (the one that looks logins up). The metrics name a provider
 * by its name alone, so providers of the same name in several scopes share a line.
 */
function addIdentityWidgets(dashboard: Dashboard, config: AlertsConfig): void {
  const names = [...new Set(identityProvidersOf(config).map((p) => p.provider))];
  if (!names.length) return;
  const service = 'poll-credentials';
  const perProvider = (name: string, label: string) =>
    names.map((provider) => metric(name, service, { provider }, 'Sum', `${provider} ${label}`));
  dashboard.addWidgets(
    new TextWidget({
      markdown:
        'Identity: logins looked up in each provider, lookups that failed (refusals among them; their verdict is `unknown`), refusals of our credentials (`exposure-alerts status` names the provider and its answer; `exposure-alerts identity test` checks a fix), and the verdicts given.',
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    ...graphs('Identity lookups', perProvider('IdentityLookups', 'lookups')),
    ...graphs('Identity lookups failed and refused', [
      ...perProvider('IdentityLookupFailures', 'failed'),
      ...perProvider('IdentityProviderRefused', 'refused'),
    ]),
    ...graphs(
      'Identity verdicts',
      VERDICTS.map((verdict) =>
        metric('IdentityVerdicts', service, { verdict }, 'Sum', verdictWords(verdict)),
      ),
      24,
    ),
  );
}
