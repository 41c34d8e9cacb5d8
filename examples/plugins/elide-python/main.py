"""elide, in Python: observation masking, oldest stale tool outputs first, until the projected
context reaches the floor.

The same rule as the built-in `elide` bundle, written against the one-file SDK, so installing this
bundle replaces the built-in strategy by id and nothing else changes: the host validates, renders
and publishes exactly as before. It reads no transcript content.
"""

from gobstopper_sdk import Plugin

STUB = "[output elided by gobstopper: {bytes} bytes]"
STUB_BUDGET_BYTES = 96  # each elided part keeps a stub; the projection prices it

plugin = Plugin("elide-python", "0.1.0")


def ceil_div(a, b):
    return -(-a // b)


def is_elidable(item):
    return item.get("est_tokens", 0) > 0 and (item.get("elidable_bytes") or 0) > 0


def savings(item):
    if not is_elidable(item):
        return 0
    parts = max(item.get("elidable_parts", 1), 1)
    raw = ceil_div(item["elidable_bytes"], 4) - ceil_div(STUB_BUDGET_BYTES * parts, 4)
    return min(item["est_tokens"], max(0, raw))


@plugin.strategy(
    "elide",
    description="Oldest stale tool outputs first until the context reaches the floor (Python).",
    kind="file",
    params_schema={"type": "object", "additionalProperties": False, "properties": {}},
)
def propose(params, ctx):
    policy = params["policy"]
    context = params["context_tokens"]
    if context < policy["effective_trigger_tokens"]:
        return {"edits": [], "rationale": "context %d tokens is below the effective trigger %d" % (context, policy["effective_trigger_tokens"])}
    keep = policy["keep_recent_tool_outputs"]
    elidable = [item for item in params["items"] if is_elidable(item)]
    stale = [item for item in elidable[: max(0, len(elidable) - keep)] if savings(item) > 0]
    if not stale:
        return {"edits": [], "rationale": "no stale tool outputs outside the %d protected recent ones" % keep}
    projected = context
    chosen = []
    for item in stale:
        if projected <= policy["floor_tokens"]:
            break
        chosen.append(item["line_index"])
        projected = max(0, projected - savings(item))
    if not chosen:
        return {"edits": [], "rationale": "context %d tokens is already at or below the floor %d" % (context, policy["floor_tokens"])}
    return {
        "edits": [{"op": "elide", "line_indexes": sorted(chosen), "stub_template": STUB}],
        "rationale": "context %d tokens exceeds trigger %d; eliding %d of %d stale tool outputs" % (context, policy["trigger_tokens"], len(chosen), len(stale)),
        "context_tokens_after": projected,
    }


if __name__ == "__main__":
    plugin.serve()
