/**
 * Call/output pairing inside one context window. On resume the client drops an output whose call
 * it has not seen and invents an "aborted" output for a call that never got one, so both change
 * the context silently. A window starts at a `compacted` record (its replacement history counts as
 * earlier than every later line) and only the newest window is judged.
 */
import type { Finding } from '../../../sdk/index.js';
import { Code, type FindingCode } from './findings.js';
import type { ToolFamily } from './records.js';

interface CallState {
  line: number;
  family: ToolFamily;
  answered: boolean;
  /** A new user turn started after this call while it was still unanswered. */
  userTurnAfter: boolean;
}

export class ToolPairing {
  private readonly calls = new Map<string, CallState>();
  /** Calls still waiting for an output since the last user turn. */
  private open: string[] = [];
  private readonly findings: Finding[] = [];
  /** Duplicate ids make the window ambiguous: which output answers which call is unknowable. */
  ambiguous = false;

  call(id: string, family: ToolFamily, line: number): void {
    if (this.calls.has(id)) {
      this.ambiguous = true;
      this.note('error', Code.duplicateToolCallId, `tool call id on line ${line + 1} was already used by line ${this.calls.get(id)!.line + 1}`, line);
      return;
    }
    this.calls.set(id, { line, family, answered: false, userTurnAfter: false });
    this.open.push(id);
  }

  output(id: string, family: ToolFamily, line: number): void {
    const call = this.calls.get(id);
    if (!call) {
      this.note('warning', Code.orphanedToolResult, `tool output on line ${line + 1} answers no earlier call in the live window; the client drops it`, line);
      return;
    }
    if (call.answered) {
      this.ambiguous = true;
      this.note('error', Code.duplicateToolResult, `tool output on line ${line + 1} answers the call on line ${call.line + 1} a second time`, line);
      return;
    }
    call.answered = true;
    if (call.family !== family) {
      this.note('warning', Code.mismatchedToolResult, `tool output on line ${line + 1} is a ${family} output for the ${call.family} call on line ${call.line + 1}`, line);
    }
  }

  /** A user message: calls still open now were abandoned mid-conversation, not cut off at the end. */
  userTurn(): void {
    for (const id of this.open) {
      const call = this.calls.get(id);
      if (call && !call.answered) call.userTurnAfter = true;
    }
    this.open = [];
  }

  /**
   * Findings of this window, including calls that never got an output. The client answers each
   * with an invented "aborted" output wherever the call sits, so a call left open before a later
   * turn and one cut off at the end are the same finding (a state card appended after a session
   * that stopped mid-call must not turn one into the other).
   */
  finish(): Finding[] {
    const out = [...this.findings];
    for (const call of this.calls.values()) {
      if (call.answered) continue;
      out.push({
        severity: 'warning',
        code: Code.unpairedToolCall,
        message: call.userTurnAfter
          ? `tool call on line ${call.line + 1} has no output although the conversation continued; the client invents an aborted output`
          : `tool call on line ${call.line + 1} has no output (the session stopped during the call); the client invents an aborted output`,
        line_index: call.line,
      });
    }
    return out;
  }

  private note(severity: Finding['severity'], code: FindingCode, message: string, line: number): void {
    // Bounded: a window of 100,000 broken pairs still reports, but the list cannot grow without end.
    if (this.findings.length < 1000) this.findings.push({ severity, code, message, line_index: line });
  }
}
