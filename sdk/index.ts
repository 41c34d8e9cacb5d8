export * from './serve.js';
export * as protocol from './protocol.js';
export type * from '../schemas/generated/types.js';
export * from './tokens.js';
export * from './limits.js';
export * from './jsonl.js';
export * from './state-card.js';
export * from './staging.js';
export * from './resume-dir.js';
