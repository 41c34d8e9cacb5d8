/**
 * Pairs tool calls with their results in the order a model would read them: a result answers a call
 * that came before it; a call with no later result is unanswered; a result with no earlier call is
 * an orphan. Ids are counted once however often they repeat.
 */
export class ToolLedger {
  private readonly calls = new Set<string>();
  private readonly answered = new Set<string>();
  private orphans = 0;

  call(id: string): void {
    this.calls.add(id);
  }

  result(id: string): void {
    if (this.calls.has(id)) this.answered.add(id);
    else this.orphans += 1;
  }

  summary(): { tool_calls: number; tool_results: number; unanswered_tool_calls: number; orphan_tool_results: number } {
    return {
      tool_calls: this.calls.size,
      tool_results: this.answered.size + this.orphans,
      unanswered_tool_calls: this.calls.size - this.answered.size,
      orphan_tool_results: this.orphans,
    };
  }
}
