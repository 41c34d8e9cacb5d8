export * from './serve.js';
export * as protocol from './protocol.js';
export type * from '../schemas/generated/types.js';
export * from './tokens.js';
