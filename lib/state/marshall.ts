/**
 * Plain values to DynamoDB attribute values and back: strings, finite numbers, booleans, null,
 * arrays and plain objects. `undefined` fields are left out. A small stand-in for
 * @aws-sdk/util-dynamodb, which would be one more package in every bundle.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export function toAttribute(value: unknown): AttributeValue | undefined {
  if (value === undefined) return undefined;
  if (value === null) return { NULL: true };
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'boolean') return { BOOL: value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot store the number ${value}`);
    return { N: String(value) };
  }
  if (Array.isArray(value)) return { L: value.map((v) => toAttribute(v) ?? { NULL: true }) };
  if (typeof value === 'object') return { M: marshall(value as Record<string, unknown>) };
  throw new TypeError(`cannot store a ${typeof value}`);
}

export function marshall(record: Record<string, unknown>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(record)) {
    const attribute = toAttribute(value);
    if (attribute !== undefined) out[key] = attribute;
  }
  return out;
}

export function fromAttribute(attribute: AttributeValue): unknown {
  if (attribute.S !== undefined) return attribute.S;
  if (attribute.N !== undefined) return Number(attribute.N);
  if (attribute.BOOL !== undefined) return attribute.BOOL;
  if (attribute.NULL !== undefined) return null;
  if (attribute.L !== undefined) return attribute.L.map(fromAttribute);
  if (attribute.M !== undefined) return unmarshall(attribute.M);
  if (attribute.SS !== undefined) return [...attribute.SS];
  if (attribute.NS !== undefined) return attribute.NS.map(Number);
  return undefined;
}

export function unmarshall(record: Record<string, AttributeValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, attribute] of Object.entries(record)) out[key] = fromAttribute(attribute);
  return out;
}
