import type { RebuiltContext } from '../../../schemas/generated/types.js';
import { routeOf, type RecordedRequest } from '../stub-server/recorded-request.js';
import { analyzeMessagesRequest } from './anthropic-context.js';
import { analyzeResponsesRequest } from './responses-context.js';

/** The rebuilt context carried by one recorded model request, or null when it is not a model turn. */
export function analyzeModelRequest(request: RecordedRequest, probe: string): RebuiltContext | null {
  if (request.method !== 'POST' || !request.body || typeof request.body !== 'object' || Array.isArray(request.body)) return null;
  const body = request.body as Record<string, unknown>;
  const route = routeOf(request.path);
  if (route.endsWith('/v1/messages')) return analyzeMessagesRequest(body, probe);
  if (route.endsWith('/v1/responses')) return analyzeResponsesRequest(body, probe);
  return null;
}
