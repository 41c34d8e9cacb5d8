/**
 * Model request bodies shaped like the ones the real clients send on resume (Claude Code 2.1.197,
 * Codex 0.171.0), built from small synthetic conversations.
 */
export const PROBE = 'probe: reply with one short line.';

type Block = Record<string, unknown>;

export const claude = {
  reminder: (text: string): Block => ({ type: 'text', text: `<system-reminder>\n${text}\n</system-reminder>\n` }),
  text: (text: string): Block => ({ type: 'text', text }),
  thinking: (text: string): Block => ({ type: 'thinking', thinking: text, signature: 'sig' }),
  toolUse: (id: string, command: string): Block => ({ type: 'tool_use', id, name: 'Bash', input: { command } }),
  toolResult: (id: string, content: string): Block => ({ type: 'tool_result', tool_use_id: id, content }),
  user: (...content: Block[]) => ({ role: 'user', content }),
  assistant: (...content: Block[]) => ({ role: 'assistant', content }),
  body: (messages: unknown[]) => ({
    model: 'claude-test',
    system: [{ type: 'text', text: 'You are a coding agent.' }],
    tools: [{ name: 'Bash' }, { name: 'Read' }],
    metadata: { user_id: JSON.stringify({ device_id: 'd', session_id: 'sess-1' }) },
    stream: true,
    messages,
  }),
};

/** A resumed two-turn session with parallel tool calls, as the client sends it after the probe prompt. */
export function claudeResumeBody(): Record<string, unknown> {
  return claude.body([
    claude.user(claude.reminder('currentDate: today'), claude.text('list the files')),
    claude.assistant(claude.thinking('plan'), claude.text('Looking.'), claude.toolUse('t1', 'ls'), claude.toolUse('t2', 'pwd')),
    claude.user(claude.toolResult('t1', 'a\nb'), claude.toolResult('t2', '/p')),
    claude.assistant(claude.text('Two files.')),
    claude.user(claude.reminder('skills available'), claude.text(PROBE)),
    { role: 'system', content: 'Available agent types: general' },
  ]);
}

const msg = (role: string, text: string) => ({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });

export const codex = {
  message: msg,
  reasoning: () => ({ type: 'reasoning', summary: [], content: null, encrypted_content: 'opaque' }),
  call: (callId: string) => ({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}', call_id: callId }),
  output: (callId: string, output: string) => ({ type: 'function_call_output', call_id: callId, output }),
  body: (input: unknown[]) => ({ model: 'gpt-test', stream: true, input, tools: [{ type: 'function', name: 'exec_command' }], prompt_cache_key: 'thread-1' }),
};

/** A resumed rollout whose last call was never answered: Codex sends "aborted" for it. */
export function codexResumeBody(): Record<string, unknown> {
  return codex.body([
    msg('developer', 'base instructions'),
    msg('developer', '<permissions instructions>recorded</permissions instructions>'),
    msg('user', '<environment_context><cwd>/old</cwd></environment_context>'),
    msg('user', 'fix the build'),
    codex.reasoning(),
    codex.call('c1'),
    codex.output('c1', 'ok'),
    msg('assistant', 'Fixed.'),
    codex.call('c2'),
    codex.output('c2', 'aborted'),
    msg('developer', '<skills_instructions>none</skills_instructions>'),
    msg('user', '<environment_context><cwd>/new</cwd></environment_context>'),
    msg('user', PROBE),
  ]);
}
