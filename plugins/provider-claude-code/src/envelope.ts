/**
 * Facts about a session gathered from its records as they pass: the first session id and cwd, a
 * title, whether every client version is a real one, and whether the records are Claude Code's.
 */
import { claudeSignal, foreignProviderSignal, type RawRecord } from './records.js';
import { isVersionString } from './versions.js';

/**
 * What the trackers of one stretch of a file saw, to be joined with the stretches around it: firsts
 * keep the earliest, lasts the latest, counts add up.
 */
export interface EnvelopeFacts {
  sessionId: string | null;
  cwd: string | null;
  versionAnomaly: boolean;
  claudeRecords: number;
  foreignRecords: number;
  /** Latest custom title, latest generated title, first summary title. */
  customTitle: string | null;
  aiTitle: string | null;
  summaryTitle: string | null;
}

/** A title the user set wins over the one the client generated, which wins over an old summary. */
class TitleTracker {
  custom: string | null = null;
  ai: string | null = null;
  summary: string | null = null;
  see(r: RawRecord): void {
    if (r.type === 'custom-title' && typeof r.customTitle === 'string') this.custom = r.customTitle;
    else if (r.type === 'ai-title' && typeof r.aiTitle === 'string') this.ai = r.aiTitle;
    else if (r.type === 'summary' && typeof r.summary === 'string' && this.summary === null) this.summary = r.summary;
  }
  get title(): string | null {
    const t = this.custom ?? this.ai ?? this.summary;
    if (t === null) return null;
    let title = t.replace(/\s+/g, ' ').trim();
    // At most 256 characters, never half a surrogate pair.
    if (title.length > 256) title = title.slice(0, /[\ud800-\udbff]/.test(title[255]!) ? 255 : 256);
    return title || null;
  }
}

/** What a scan result or discovery reports of the envelope. */
export interface EnvelopeReport {
  /** First `sessionId` on a record. */
  sessionId: string | null;
  /** First `cwd` on a record. */
  cwd: string | null;
  title: string | null;
  /** A conversation record's `version` is not a version string. */
  versionAnomaly: boolean;
  claudeRecords: number;
  foreignRecords: number;
}

/** Envelope facts gathered from records as they stream past. */
export class EnvelopeTracker {
  sessionId: string | null = null;
  cwd: string | null = null;
  versionAnomaly = false;
  claudeRecords = 0;
  foreignRecords = 0;
  private lastVersion: string | null = null;
  private readonly titles = new TitleTracker();

  see(r: RawRecord): void {
    if (this.sessionId === null && typeof r.sessionId === 'string' && r.sessionId.length > 0) this.sessionId = r.sessionId;
    if (this.cwd === null && typeof r.cwd === 'string' && r.cwd.length > 0) this.cwd = r.cwd;
    // A client never writes anything but its own version string; a placeholder in its place
    // marks records collected or edited by hand. (Versions may go backwards in a real session
    // resumed by two installs, so order alone proves nothing.)
    if (typeof r.version === 'string' && r.version !== this.lastVersion && (r.type === 'user' || r.type === 'assistant' || r.type === 'system' || r.type === 'attachment')) {
      if (!isVersionString(r.version)) this.versionAnomaly = true;
      else this.lastVersion = r.version;
    }
    if (claudeSignal(r)) this.claudeRecords += 1;
    else if (foreignProviderSignal(r)) this.foreignRecords += 1;
    this.titles.see(r);
  }

  get title(): string | null {
    return this.titles.title;
  }

  report(): EnvelopeReport {
    return { sessionId: this.sessionId, cwd: this.cwd, title: this.title, versionAnomaly: this.versionAnomaly, claudeRecords: this.claudeRecords, foreignRecords: this.foreignRecords };
  }

  facts(): EnvelopeFacts {
    const { sessionId, cwd, versionAnomaly, claudeRecords, foreignRecords } = this;
    return { sessionId, cwd, versionAnomaly, claudeRecords, foreignRecords, customTitle: this.titles.custom, aiTitle: this.titles.ai, summaryTitle: this.titles.summary };
  }

  /**
   * Takes in what was seen on the lines right after this tracker's: the result is what one tracker
   * would hold had it seen both stretches in order. (The last valid version is only a shortcut for
   * the anomaly check, so it need not carry over.)
   */
  absorb(later: EnvelopeFacts): void {
    this.sessionId ??= later.sessionId;
    this.cwd ??= later.cwd;
    this.versionAnomaly ||= later.versionAnomaly;
    this.claudeRecords += later.claudeRecords;
    this.foreignRecords += later.foreignRecords;
    this.titles.custom = later.customTitle ?? this.titles.custom;
    this.titles.ai = later.aiTitle ?? this.titles.ai;
    this.titles.summary ??= later.summaryTitle;
  }
}
