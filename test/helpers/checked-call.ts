/**
 * A request sent over an in-memory connection with both directions checked against the method's
 * schemas, as the host checks them: protocol tests of a plugin assert it speaks the published
 * contract, not just that it answers.
 */
import { expect } from 'vitest';
import * as P from '../../sdk/protocol.js';
import * as validators from '../../schemas/generated/validators.js';
import type { connectInMemory } from './memory-connection.js';

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
const validator = (name: string) => (validators as unknown as Record<string, Validator>)[`validate${name}`]!;

export async function checkedCall<R>(conn: ReturnType<typeof connectInMemory>, method: string, params: object): Promise<R> {
  const schemas = P.MethodSchemas[method]!;
  const checkParams = validator(schemas.params!);
  expect(checkParams(params), JSON.stringify(checkParams.errors)).toBe(true);
  const result = await conn.host.sendRequest<R>(method, params);
  const checkResult = validator(schemas.result!);
  expect(checkResult(result), JSON.stringify(checkResult.errors)).toBe(true);
  return result;
}
