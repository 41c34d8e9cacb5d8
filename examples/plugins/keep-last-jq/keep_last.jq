# One JSON-RPC 2.0 message in, at most one out. Notifications ($/cancelRequest) get no answer;
# exit stops the process.

def respond($result): {jsonrpc: "2.0", id: .id, result: $result};
def fail($code; $message): {jsonrpc: "2.0", id: .id, error: {code: $code, message: $message}};

def elidable: (.est_tokens // 0) > 0 and ((.elidable_bytes // 0) > 0);

# N = policy.strategy_params.keep_last, else policy.keep_recent_tool_outputs. The newest
# keep_recent_tool_outputs elidable items are protected and never targeted.
def propose:
  .params as $p
  | $p.policy.keep_recent_tool_outputs as $protect
  | (($p.policy.strategy_params // {}).keep_last // $protect) as $keep
  | [$p.items[] | select(elidable)] as $elidable
  | (if $protect > 0 then $elidable[-$protect:] else [] end
     | reduce .[] as $item ({}; .[$item.line_index | tostring] = true)) as $protected
  | [$elidable[] | select(.kind == "tool_result")] as $outputs
  | ($outputs | length) as $count
  | (if $count > $keep then $outputs[0:($count - $keep)] else [] end) as $older
  | [$older[] | .line_index | select(($protected[tostring] // false) | not)] as $targets
  | if ($targets | length) == 0 then
      {edits: [], rationale: "\($count) tool outputs, keeping the newest \($keep): nothing older to stub"}
    else
      {edits: [{op: "elide", line_indexes: $targets, stub_template: "[output elided by gobstopper: {bytes} bytes]"}],
       rationale: "kept the newest \($keep) of \($count) tool outputs raw; stubbed \($targets | length) older ones"}
    end;

def keep_last_valid:
  ((.params.policy.strategy_params // {}).keep_last // 0) as $k
  | ($k | type) == "number" and $k >= 0 and ($k | floor) == $k;

if .method == "initialize" then
  if any(.params.protocol_versions[]; . == 1) then
    respond({
      protocol_version: 1,
      plugin: {id: "keep-last-jq", version: "0.1.0"},
      strategies: [{
        id: "keep_last_jq",
        description: "Keep the newest N tool outputs raw; stub the older ones (N = strategy_params.keep_last, else keep_recent_tool_outputs).",
        kind: "file",
        params_schema: {type: "object", properties: {keep_last: {type: "integer", minimum: 0, maximum: 100000}}}
      }]
    })
  else fail(-32005; "plugin speaks protocol 1 only") end
elif .method == "strategy/propose" then
  if .params.strategy_id != "keep_last_jq" then fail(-32005; "strategy \(.params.strategy_id) is not provided by this plugin")
  elif keep_last_valid | not then fail(-32002; "strategy_params.keep_last must be a non-negative integer")
  else respond(propose) end
elif .method == "shutdown" then respond(null)
elif .method == "exit" then halt
elif has("id") and has("method") then fail(-32601; "unknown method \(.method)")
else empty
end
