/**
 * What the eval, bench and eval-study commands use. Everything here is pure or works on private
 * copies through injected functions; nothing calls a plugin itself.
 */
export { extractProbes, scoreProbes, tailStartLine, liveLines, MAX_PROBES, MAX_MISSED_PROBES, type Probe, type ProbeSet } from './probes.js';
export { cachePreservationScore, prefixTokens, rewritesFile } from './plan-metrics.js';
export { verifyDelta, type VerifyDelta } from './verify-delta.js';
export { buildEvalRow, buildEvalResult, errorCode, evalBaseline, markBestRow, isRankable, rowError, type EvalBaseline, type RenderedCandidate, type StrategyOutcome } from './rows.js';
export { evaluateSession, type EvalSessionInput, type EvalSessionOptions, type RunStrategy } from './eval-session.js';
export { renderEvalTable } from './eval-table.js';
export { benchRowsFromEval, benchFailureRow } from './bench-rows.js';
export { BENCH_CSV_COLUMNS, benchCsv, csvField } from './bench-csv.js';
export { aggregateBench, failedSessionCount, median, quantile, quartiles } from './bench-aggregate.js';
export { assertBenchOutputsAreNew, benchOutputFormat, collectBench, writeBenchOutputs, type BenchJob, type BenchOutputs, type BenchSessionResult, type CollectedBench } from './bench-collect.js';
export { runJobsInParallel, type JobOutcome, type JobProgress, type ParallelRunOptions } from './parallel-runner.js';
export { assertNewOutputPath, writeNewFile } from './output-file.js';
export { renderBenchReportHtml, type BenchReportInput, type CompactionPoint, type ContextPoint, type SessionTimeline } from './report-html.js';
export { contextSeriesFromSource } from './context-series.js';
export {
  RETENTION_SCHEMA, STUDY_LIMITS, PINNED_KINDS, assertRounds, assertStudySourceSize, bindManifest, classifyCandidate, countByKind, manifestJson,
  parseManifest, prepareManifest, readManifestFile, type BoundCheck,
} from './study-manifest.js';
export { extractSlots, messageShapeSlots, type SlotExtractor, type TextSlot } from './study-slots.js';
export { scoreRetention } from './study-score.js';
export { contentTokens, lexicalCoverage, LEXICAL_COVER } from './study-text.js';
export { auditRetention, retentionCard, runRetentionStudy, shapeArmPlan, STUDY_ARMS, type AuditInput, type StudyDeps, type StudyRunInput } from './study-replay.js';
export { prepareManifestFile, renderStudyLines } from './study-output.js';
