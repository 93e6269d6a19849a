/**
 * The DynamoDB SDK, loaded with `require`. The package's CommonJS build is one file per package,
 * while its ES module build is hundreds of small files that Node resolves and links one by one:
 * loading it this way takes about half the time, and that time is every cold start. Types still
 * come from the package itself. Everything in lib/ takes the SDK from here, so there is one copy of
 * its classes (an `instanceof` check against the other build would never match).
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

type DynamoSdk = typeof import('@aws-sdk/client-dynamodb');

const sdk = load('@aws-sdk/client-dynamodb') as DynamoSdk;

export const {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  CreateTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ResourceNotFoundException,
  ScanCommand,
  UpdateItemCommand,
} = sdk;

export const DynamoDBClient = sdk.DynamoDBClient;
export type DynamoDBClient = import('@aws-sdk/client-dynamodb').DynamoDBClient;

/** Secrets Manager, loaded (the same way) only by code that reads a secret from AWS. */
export function secretsManager(): typeof import('@aws-sdk/client-secrets-manager') {
  return load('@aws-sdk/client-secrets-manager') as typeof import('@aws-sdk/client-secrets-manager');
}
