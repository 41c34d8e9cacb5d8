#!/bin/sh
# keep_last_jq: the "keep the newest N tool outputs raw, stub the older ones" rule in jq.
# One jq process reads the host's NDJSON messages from stdin and writes one answer per request.
# jq must be on the PATH the manifest passes through.
set -eu
exec jq --unbuffered --compact-output --from-file keep_last.jq
