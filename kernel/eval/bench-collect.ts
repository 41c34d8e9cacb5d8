/**
 * Turns the parallel runner's per-session outcomes into the bench result: rows (a failure row for a
 * session that failed, vanished or crashed its worker), per-strategy aggregates and the timelines
 * for the report; and writes the requested output files, each a new file.
 */
import type { BenchCommandResult, BenchRow, EvalCommandResult } from '../../schemas/generated/types.js';
import { aggregateBench, failedSessionCount } from './bench-aggregate.js';
import { benchCsv } from './bench-csv.js';
import { benchFailureRow, benchRowsFromEval } from './bench-rows.js';
import { unlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { GobstopperError, usageError } from '../errors.js';
import { writeNewFile, assertNewOutputPath } from './output-file.js';
import type { JobOutcome } from './parallel-runner.js';
import { renderBenchReportHtml, type SessionTimeline } from './report-html.js';
import type { BenchWindow } from './bench-window.js';

/** What the bench passes to a worker for one session. */
export interface BenchJob {
  provider: string;
  session: string;
  path: string;
}

/** What a worker returns for one session. */
export interface BenchSessionResult {
  eval: EvalCommandResult;
  timeline?: SessionTimeline | null;
  /** What eval warned of the configuration for this session (a legacy command, a prefix-keyed table). */
  config_warnings?: string[];
}

export interface CollectedBench {
  result: BenchCommandResult;
  timelines: SessionTimeline[];
  /** Why the events log the timelines' compactions come from could not be read, if it could not. */
  events_unreadable?: string | null;
  /** Where the sessions were looked for, for the report's reason when it has nothing to show. */
  window?: BenchWindow;
}

export function collectBench(outcomes: ReadonlyArray<JobOutcome<BenchJob, BenchSessionResult>>): CollectedBench {
  const rows: BenchRow[] = [];
  const timelines: SessionTimeline[] = [];
  let measured = 0;
  const warnings = new Set<string>();
  for (const outcome of outcomes) {
    if (outcome.ok) {
      for (const w of outcome.result.config_warnings ?? []) warnings.add(w);
      const sessionRows = benchRowsFromEval(outcome.result.eval, outcome.job.path);
      // Read but every strategy failed on it: as unmeasured as a session that failed whole.
      if (sessionRows.some((r) => r.failure === null)) measured += 1;
      rows.push(...sessionRows);
      if (outcome.result.timeline) timelines.push(outcome.result.timeline);
    } else {
      const message = outcome.code === 'ENOENT' ? `session file is gone: ${outcome.error}` : outcome.error;
      const failure = outcome.kind === 'policy_resolution_failed' ? 'policy_resolution_failed' : 'session_evaluation_failed';
      rows.push(benchFailureRow(outcome.job.provider, outcome.job.session, outcome.job.path, failure, message, null, outcome.code));
    }
  }
  return {
    result: {
      sessions: outcomes.length,
      sessions_measured: measured,
      sessions_failed: failedSessionCount(rows),
      rows,
      aggregates: aggregateBench(rows),
      output_path: null,
      html_path: null,
      warnings: [...warnings],
    },
    timelines,
  };
}

export type BenchOutputFormat = 'csv' | 'json';

const EXTENSION_FORMATS: ReadonlyArray<[string, BenchOutputFormat]> = [
  ['.json', 'json'],
  ['.csv', 'csv'],
];

/**
 * The format of the rows file: what its extension says, else `explicit`, else CSV. An explicit
 * format that contradicts the extension is refused rather than silently winning or losing.
 */
export function benchOutputFormat(path: string, explicit?: BenchOutputFormat): BenchOutputFormat {
  // Rows named .html, a report named .csv: the two flags swapped, which nothing would otherwise say.
  if (/\.html?$/i.test(path)) throw usageError('output_format_conflict', `--output writes the rows (CSV or JSON), not the report, and ${path} is named as a web page; the report goes to --html`);
  const byExtension = EXTENSION_FORMATS.find(([ext]) => path.toLowerCase().endsWith(ext))?.[1];
  if (byExtension && explicit && explicit !== byExtension) {
    throw usageError('output_format_conflict', `--format ${explicit} contradicts the extension of ${path}; drop --format or rename the file`);
  }
  return byExtension ?? explicit ?? 'csv';
}

export interface BenchOutputs {
  output?: string | null;
  format?: BenchOutputFormat;
  html?: string | null;
}

/** Checks both paths before the bench starts, so a taken name fails in a second, not after an hour. */
export function assertBenchOutputsAreNew(outputs: BenchOutputs): void {
  if (outputs.format !== undefined && outputs.output == null) throw usageError('format_without_output', '--format applies to --output; name the file to write');
  if (outputs.output != null) {
    assertNewOutputPath(outputs.output);
    benchOutputFormat(outputs.output, outputs.format);
  }
  if (outputs.html != null) assertNewOutputPath(outputs.html);
  if (outputs.output != null && outputs.html != null && resolve(outputs.output) === resolve(outputs.html)) {
    throw new GobstopperError('output_conflict', '--output and --html must name different files', { exit: 2 });
  }
  const rowsName = outputs.html == null ? undefined : EXTENSION_FORMATS.find(([ext]) => outputs.html!.toLowerCase().endsWith(ext));
  if (rowsName) throw usageError('output_format_conflict', `--html writes the report, a web page, and ${outputs.html} is named as ${rowsName[1].toUpperCase()} rows; the rows go to --output`);
}

export function writeBenchOutputs(collected: CollectedBench, outputs: BenchOutputs, generatedAt: string = new Date().toISOString()): BenchCommandResult {
  assertBenchOutputsAreNew(outputs);
  const result = collected.result;
  if (outputs.output != null) {
    const format = benchOutputFormat(outputs.output, outputs.format);
    writeNewFile(outputs.output, format === 'json' ? JSON.stringify({ ...result, output_path: outputs.output, html_path: outputs.html ?? null }, null, 2) + '\n' : benchCsv(result.rows));
    result.output_path = outputs.output;
  }
  if (outputs.html != null) {
    const html = renderBenchReportHtml({
      generated_at: generatedAt,
      sessions: result.sessions,
      sessions_measured: result.sessions_measured,
      rows: result.rows,
      aggregates: result.aggregates,
      timelines: collected.timelines,
      events_unreadable: collected.events_unreadable ?? null,
      window: collected.window,
    });
    try {
      writeNewFile(outputs.html, html);
    } catch (error) {
      // Leave the disk as it was: the rows file this call created goes too.
      if (result.output_path) unlinkSync(result.output_path);
      result.output_path = null;
      throw error;
    }
    result.html_path = outputs.html;
  }
  return result;
}
