/**
 * The DynamoDB SDK, loaded with `require`. The package's CommonJS build is one file per package,
 * while its ES module build is hundreds of small files that Node resolves and links one by one:
 * loading it this way takes about half the time, and that time is every cold start. Types still
 * come from the package itself. Everything in lib/ takes the SDK from here, so there is one copy of
 * its classes (an `instanceof` check against the other build would never match). Secrets Manager is
 * loaded the same way by secrets.ts, without this module (aws-require.ts).
 */
import { requireSdk } from './aws-require.ts';

type DynamoSdk = typeof import('@aws-sdk/client-dynamodb');

const sdk = requireSdk('@aws-sdk/client-dynamodb') as DynamoSdk;

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
