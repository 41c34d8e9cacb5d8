"""recency, a scorer in Python: the newer a tool output, the more it is worth keeping.

Deliberately simpler than the built-in heuristic scorer. Select it with `scorer = "recency"` in a
policy table; the `scored` strategy then asks the host for scores and the host routes the request
here. Scores are keep probabilities in [0, 1]: position in the transcript, with error outputs
bumped up so an unresolved failure is kept longer.
"""

from gobstopper_sdk import Plugin

ERROR_MARKERS = ("error", "failed", "exception", "traceback", "exit code")

plugin = Plugin("scorer-recency-python", "0.1.0")


@plugin.scorer("recency", description="Keep probability grows with position; error outputs get a bonus (Python).")
def score(params, ctx):
    items = {item["line_index"]: item for item in params["items"]}
    last = max(items) if items else 0
    scores = []
    for line in params["candidates"]:
        item = items.get(line)
        if item is None:
            scores.append({"line_index": line, "keep_probability": None})
            continue
        base = line / last if last else 0.0
        text = ((item.get("summary") or "") + " " + item.get("label", "")).lower()
        bonus = 0.25 if any(marker in text for marker in ERROR_MARKERS) else 0.0
        scores.append({"line_index": line, "keep_probability": min(1.0, 0.75 * base + bonus)})
    return {"scores": scores, "summary": "recency scorer: %d candidates" % len(scores)}


if __name__ == "__main__":
    plugin.serve()
