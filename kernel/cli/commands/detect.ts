import { Flags } from '@oclif/core';
import type { DetectPublication, DetectRow } from '../../../schemas/generated/types.js';
import { countedProjection, publications, publishedAt, stillAsPublished, type Publication } from '../../publish/publications.js';
import { configFlag, providerFilterFlag } from '../../config/cli-flags.js';
import { loadConfig } from '../../config/load-config.js';
import { discoveryMaxAge } from '../../config/resolve-config.js';
import { discoveryWindow } from '../../policy/defaults.js';
import { aheadSummary, detectSessions } from '../../sessions/detect.js';
import { unreadableSummary } from '../../sessions/selector.js';
import { missingStoresNote, noStoreExists } from '../../sessions/missing-stores.js';
import { withRuntime } from '../../services/runtime.js';
import { wrapText } from '../../text/wrap.js';
import { BaseCommand } from '../base-command.js';
import { describeWindow, formatAge, formatCount } from '../../text/human.js';
import { homeFlags, providerHomes } from '../session-flags.js';

/** A lifetime sum read from the tail alone is a lower bound, and says so. */
function lifetime(row: DetectRow, tokens: number | null): string {
  return tokens !== null && row.lifetime_scope === 'partial' ? `≥${formatCount(tokens)}` : formatCount(tokens);
}

/** Forks named under the table; --json has every one. */
const FORKS_NAMED = 6;

/** What a published file was made from; `resumed` when a client has written to it since. */
function describePublication(publication: Publication, resumed: boolean): DetectPublication {
  const r = publication.receipt;
  return { kind: r.kind, source_session_id: r.source_session_id, strategy: r.strategy, snapshot_manifest_sha256: r.snapshot_manifest_sha256, resumed };
}

/** "compacted by strategy middle", "restore", "fork", and whether a client has picked it up. */
function madeBy(p: DetectPublication): string {
  const what = p.kind === 'compact' ? `compacted by strategy ${p.strategy}` : p.kind;
  return p.resumed ? `${what}, resumed` : what;
}

export default class Detect extends BaseCommand<DetectRow[]> {
  static override summary = 'List agent sessions, newest first, with their context size.';
  static override description = `Finds Claude Code and Codex sessions (and those of any installed provider plugin) from the tails of their transcripts, without reading whole files. For each: provider, id, project folder, age, whether it is live (updated by its client within 180 s; live sessions are never rewritten, and a fork gobstopper just wrote is not live until a client writes to it), the current context in tokens (as the provider reported it, estimated from the bytes, or, for a fork gobstopper published that nobody has resumed, its plan's projection, which --json gives as projected_context_tokens beside the reported context_tokens; the BASIS column says which: reported, estimated or projected, and unknown when there is nothing to count; --json gives context_basis for context_tokens), the model's context window when known, the lifetime input and cached tokens, and, for a file gobstopper published (a fork, a restore), the session it was made from (--json: published). A receipt in the vault that cannot be read is named on stderr: the fork it describes is then listed as a session of its own.

By default only sessions updated in the last 7 days are listed ([discovery] max_age_secs in the config changes that; 0 lists every session); --all lists every session.`;
  static override examples = ['<%= config.bin %> detect', '<%= config.bin %> detect --all --limit 0', '<%= config.bin %> detect --provider codex --json'];
  static override flags = {
    all: Flags.boolean({ summary: 'Include sessions of any age (default: the last 7 days, or [discovery] max_age_secs).' }),
    limit: Flags.integer({ summary: 'Show at most this many rows (0 shows all; --json always lists all).', default: 20, min: 0 }),
    // People say claude for Claude Code, as config, explain and policy-check take it.
    provider: providerFilterFlag,
    ...homeFlags,
    config: configFlag,
  };

  async run(): Promise<DetectRow[]> {
    const { flags } = await this.parse(Detect);
    // Only [discovery] is read: listing sessions layers no policy, so a policy plan would refuse
    // (a floor above the trigger, an untrusted command) is plan's to report, not a reason to list nothing.
    const loaded = await loadConfig({ configPath: flags.config });
    const maxAgeSecs = flags.all ? null : discoveryWindow(discoveryMaxAge(loaded));
    const { rows, unlisted, searched, ahead, ...unread } = await withRuntime({ homes: providerHomes(flags), providers: flags.provider }, async (rt) =>
      detectSessions(await rt.providers(), rt.homes, { maxAgeSecs }),
    );
    // A fork or restore gobstopper just wrote is recent, not live: no client has written to it.
    // One a stopped run linked into place before finishing its record is gobstopper's all the same.
    const { found: published, unfinished, receiptsWarning } = await publications(process.env);
    const untouched = new Map<DetectRow, Publication | null>();
    for (const row of rows) {
      const publication = publishedAt(published, row.path) ?? publishedAt(unfinished, row.path);
      const unchanged = publication !== null && stillAsPublished(publication, row.bytes);
      untouched.set(row, unchanged ? publication : null);
      if (publication) row.published = describePublication(publication, !unchanged);
    }
    for (const row of rows) if (row.active && untouched.get(row)) row.active = false;
    // A compaction nobody has resumed still carries its source's last usage report: plan counts the projection.
    for (const row of rows) {
      const compaction = untouched.get(row)?.compaction;
      if (compaction && row.context_basis === 'reported') row.projected_context_tokens = countedProjection(compaction, row.context_tokens) ?? undefined;
      if (row.projected_context_tokens === undefined) delete row.projected_context_tokens;
    }
    // Nothing at all, and a provider's folders do not exist: its home is probably not where it was looked for.
    const missing = rows.length === 0 && unlisted.length === 0 ? missingStoresNote(searched) : null;
    if (missing !== null && this.jsonEnabled()) this.warning(`no sessions found: ${missing}`);
    if (!this.jsonEnabled()) {
      // With no folder to look in at all, an older session is not what is missing.
      if (missing !== null && noStoreExists(searched)) this.sayProse(`No sessions found: ${missing}.`);
      else {
        this.printTable(rows, flags.limit, maxAgeSecs);
        if (missing !== null) this.sayProse(`${missing}.`);
      }
      if (unlisted.length > 0) {
        // "verify <path>" is no help without a path: the newest is named, on a line of its own to copy.
        this.sayProse(`${unlisted.length} composite or sub-agent transcript(s) not listed: no client resumes them as sessions; gobstopper verify <path> says why, as for the newest:`);
        this.say(`  ${unlisted[0]}`);
      }
    }
    if (receiptsWarning !== null) this.warning(receiptsWarning);
    // On stderr in both modes: the JSON is the list of sessions, and these are not sessions yet.
    if (unread.unreadable.length > 0) this.warning(`${unreadableSummary(unread)}; not listed`);
    // Such a row reads "live, 0s" for as long as the clock is behind it: the user should hear why.
    if (ahead.length > 0) this.warning(`${aheadSummary(ahead)}: listed as live until then`);
    return rows;
  }

  private printTable(rows: DetectRow[], limit: number, maxAgeSecs: number | null): void {
    if (rows.length === 0) {
      this.say(maxAgeSecs === null ? 'No sessions found.' : `No sessions found in the last ${describeWindow(maxAgeSecs)} (gobstopper detect --all lists older ones).`);
      return;
    }
    const shown = limit === 0 ? rows : rows.slice(0, limit);
    const projected = (r: DetectRow) => r.projected_context_tokens ?? null;
    const table = this.sayTable(
      [
        { header: 'PROVIDER' },
        // Cut at the end: a session is selected by the prefix people read here.
        { header: 'SESSION', fit: 'end', maxWidth: 38 },
        { header: 'STATE' },
        { header: 'AGE', align: 'right' },
        { header: 'CONTEXT', align: 'right' },
        { header: 'BASIS' },
        { header: 'WINDOW', align: 'right', optional: true },
        { header: 'LIFETIME IN', align: 'right', optional: true },
        { header: 'CACHED', align: 'right', optional: true },
        // A project cut under 20 columns names nothing; the window column goes first.
        { header: 'PROJECT', fit: 'middle', minWidth: 20, maxWidth: 48 },
      ],
      shown.map((r) => [
        r.provider,
        r.session_id,
        r.active ? 'live' : 'idle',
        formatAge(r.age_secs),
        projected(r) === null ? formatCount(r.context_tokens) : `~${formatCount(projected(r))}`,
        projected(r) === null ? r.context_basis : 'projected',
        formatCount(r.model_context_window),
        lifetime(r, r.lifetime_input_tokens),
        lifetime(r, r.lifetime_cached_tokens),
        r.cwd ?? '',
      ]),
    );
    if (table.header.includes('LIFETIME IN') && shown.some((r) => r.lifetime_scope === 'partial' && r.lifetime_input_tokens !== null)) {
      this.say('≥ marks lifetime sums of the turns read from the tail only; the whole file holds more.');
    }
    if (shown.some((r) => projected(r) !== null)) {
      for (const line of wrapText("projected: a fork gobstopper published and nobody has resumed yet; its last usage report predates the compaction, so the plan's projection is shown, as plan and eval count it (--json keeps the report in context_tokens and gives the projection in projected_context_tokens).", this.tableWidth())) this.say(line);
    }
    const forks = shown.filter((r) => r.published);
    if (forks.length > 0) {
      const made = forks.slice(0, FORKS_NAMED).map((r) => `${r.session_id.slice(0, 8)} from ${r.published!.source_session_id.slice(0, 8)} (${madeBy(r.published!)})`);
      const more = forks.length > FORKS_NAMED ? ` and ${forks.length - FORKS_NAMED} more (--json: published)` : '';
      for (const line of wrapText(`published by gobstopper: ${made.join(', ')}${more}; gobstopper undo <fork> restores what it was made from.`, this.tableWidth())) this.say(line);
    }
    if (shown.length < rows.length) this.say(`Showing the newest ${shown.length} of ${rows.length} sessions; --limit 0 shows all.`);
  }
}
