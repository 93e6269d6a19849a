/**
 * Whether the upstream refuses a tenant's credentials (docs/configuration.md): one item per
 * tenant, so a refusal is reported once for the whole deployment, however many runs meet it, and
 * the report starts again only after the tenant was accepted in between. `top` is the top-level
 * sources' tenant.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from './marshall.ts';
import { UpdateItemCommand } from './sdk.ts';

export const tenantStateKey = (tenant: number | undefined) => ({
  pk: `tenant#${tenant ?? 'top'}`,
  sk: 'state',
});

export class TenantStateStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Notes the refusal; true for the run that noted it first (which reports it). */
  async markRefused(tenant: number | undefined, at: Date, message: string): Promise<boolean> {
    return this.conditional({
      UpdateExpression: 'SET refusedAt = :at, refusedMessage = :m',
      ConditionExpression: 'attribute_not_exists(refusedAt)',
      ExpressionAttributeValues: marshall({ ':at': at.toISOString(), ':m': message.slice(0, 500) }),
      Key: marshall(tenantStateKey(tenant)),
    });
  }

  /** Forgets a refusal; true when there was one (the tenant is accepted again). */
  async clearRefused(tenant: number | undefined): Promise<boolean> {
    return this.conditional({
      UpdateExpression: 'REMOVE refusedAt, refusedMessage',
      ConditionExpression: 'attribute_exists(refusedAt)',
      Key: marshall(tenantStateKey(tenant)),
    });
  }

  private async conditional(
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName'>,
  ): Promise<boolean> {
    try {
      await this.client.send(new UpdateItemCommand({ TableName: this.tableName, ...input }));
      return true;
    } catch (error) {
      if ((error as { name?: string })?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
