"""keep_last_py: keep the newest N tool outputs raw and replace the older ones with a short stub.

The classic "keep last N" rule. N is policy.strategy_params.keep_last, else the policy's
keep_recent_tool_outputs. It needs no transcript content: the items carry kind, size and whether a
record has an elidable payload, which is all the rule looks at. It never targets the protected
tail (the newest keep_recent_tool_outputs elidable items) or anything that is not elidable, so the
host's plan validation accepts its edits.
"""

from gobstopper_sdk import Plugin, invalid_input

STUB = "[output elided by gobstopper: {bytes} bytes]"

PARAMS_SCHEMA = {
    "type": "object",
    "properties": {
        "keep_last": {
            "description": "How many of the newest tool outputs stay raw.",
            "type": "integer",
            "minimum": 0,
            "maximum": 100000,
        }
    },
}

plugin = Plugin("keep-last-python", "0.1.0")


def is_elidable(item):
    return item.get("est_tokens", 0) > 0 and (item.get("elidable_bytes") or 0) > 0


@plugin.strategy(
    "keep_last_py",
    description="Keep the newest N tool outputs raw; stub the older ones (N = strategy_params.keep_last, else keep_recent_tool_outputs).",
    kind="file",
    params_schema=PARAMS_SCHEMA,
)
def propose(params, ctx):
    policy = params["policy"]
    protect = policy["keep_recent_tool_outputs"]
    keep_last = (policy.get("strategy_params") or {}).get("keep_last", protect)
    if not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 0:
        raise invalid_input("strategy_params.keep_last must be a non-negative integer")

    elidable = [item for item in params["items"] if is_elidable(item)]
    protected = set(item["line_index"] for item in elidable[max(0, len(elidable) - protect):]) if protect > 0 else set()
    outputs = [item for item in elidable if item["kind"] == "tool_result"]
    older = outputs[: max(0, len(outputs) - keep_last)]
    targets = [item["line_index"] for item in older if item["line_index"] not in protected]

    if not targets:
        return {"edits": [], "rationale": "%d tool outputs, keeping the newest %d: nothing older to stub" % (len(outputs), keep_last)}
    return {
        "edits": [{"op": "elide", "line_indexes": targets, "stub_template": STUB}],
        "rationale": "kept the newest %d of %d tool outputs raw; stubbed %d older ones" % (keep_last, len(outputs), len(targets)),
    }


if __name__ == "__main__":
    plugin.serve()
