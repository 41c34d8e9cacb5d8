/** One HTTP request the stub model server received, kept in memory for the rehearsal's analysis. */
export interface RecordedRequest {
  /** 1-based arrival order. */
  seq: number;
  method: string;
  /** Path with its query string, as sent. */
  path: string;
  /** Lower-case header names; credentials are replaced by their length, never kept. */
  headers: Record<string, string>;
  /** Parsed JSON body, the raw text when it is not JSON, or null when there was none. */
  body: unknown;
  body_bytes: number;
  received_at_ms: number;
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization', 'openai-organization', 'openai-project']);

export function redactHeaders(raw: NodeJS.Dict<string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    const lower = name.toLowerCase();
    out[lower] = SECRET_HEADERS.has(lower) ? `<redacted ${text.length} chars>` : text;
  }
  return out;
}

/** The request path without its query string. */
export function routeOf(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

/** A model turn: what the client rebuilt from the transcript goes out in these two requests only. */
export function isModelRequest(request: RecordedRequest): boolean {
  if (request.method !== 'POST') return false;
  const route = routeOf(request.path);
  return route.endsWith('/v1/messages') || route.endsWith('/v1/responses');
}
