/** Pure helpers for strategy and scorer authors; bundles import them and the bundler inlines them. */
export * from './candidates.js';
export * from './markers.js';
export * from './state-card-digest.js';
export * from './choose-with-digest.js';
export * from './plan.js';
export * from './digest-plan.js';
export * from './min-heap.js';
export * from './score-table.js';
export * from './cache-score.js';
export * from './prefix.js';
