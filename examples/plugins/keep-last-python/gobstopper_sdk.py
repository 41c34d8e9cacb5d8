"""Gobstopper plugin SDK for Python: one file, standard library only.

A plugin is a loop over lines: gobstopper writes one JSON-RPC 2.0 message per line to the plugin's
stdin and reads one per line from its stdout. This module runs that loop, answers `initialize`,
`shutdown` and `exit`, and routes `strategy/propose`, `scorer/score` and `provider/*` to the
functions you register. Copy it next to your plugin's entry file and list it in the manifest's
`files`.

    from gobstopper_sdk import Plugin

    plugin = Plugin("my-plugin", "0.1.0")

    @plugin.strategy("my_strategy", description="...", kind="file")
    def propose(params, ctx):
        return {"edits": [], "rationale": "nothing to do"}

    plugin.serve()

Handlers receive the request params (a dict) and a Context that can ask the host for things while
the handler runs (ctx.score, ctx.propose, ctx.read_items) and report to it (ctx.log, ctx.progress).
Raise PluginError (or use invalid_input / source_changed / limit_exceeded) to answer with a
protocol error. An OSError a handler lets through (a full disk under a provider's write of the
staging file) is answered as an internal error whose data names the errno, so gobstopper treats it
as the machine's state, as it treats a failure of its own writes. stdout belongs to the protocol:
print() and sys.stdout go to stderr once serve() starts, and stderr is the plugin's log, captured
by gobstopper.
"""

import errno
import json
import os
import sys
import sysconfig
import traceback

PROTOCOL_VERSION = 1

# The params_schema "format" that marks a string as another strategy's id (a selector's candidates,
# an editor it forwards): the host refuses a configured one that no installed or built-in bundle
# serves. The TypeScript SDK exports the same value as STRATEGY_ID_FORMAT.
STRATEGY_ID_FORMAT = "strategy-id"

# Application error codes (schemas/v1/rpc.schema.json#/$defs/PluginErrorCode).
SOURCE_CHANGED = -32001
INVALID_INPUT = -32002
CAPABILITY_DENIED = -32003
LIMIT_EXCEEDED = -32004
NOT_SUPPORTED = -32005
REQUEST_CANCELLED = -32800

# JSON-RPC 2.0 codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# host/log levels (LogParams.level).
LOG_LEVELS = ("debug", "info", "warn", "error")

PROVIDER_METHODS = {
    "provider/discover": "discover",
    "provider/identify": "identify",
    "provider/usage": "usage",
    "provider/parse": "parse",
    "provider/render": "render",
    "provider/verify": "verify",
    "provider/fork_target": "fork_target",
}


class PluginError(Exception):
    """Raise from a handler to answer the request with this JSON-RPC error.

    data, when given, is the error's data: {"errno": "ENOSPC"} names the file-system failure behind it.
    """

    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.data = data

    def answer(self):
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class HostError(Exception):
    """The host answered one of the plugin's requests (ctx.score, ...) with an error."""

    def __init__(self, code, message):
        Exception.__init__(self, "host answered with error %s: %s" % (code, message))
        self.code = code
        self.message = message


def _encode(message):
    """One protocol message as its line, without the newline."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# Frames that are not the plugin's own: this SDK's and the standard library's.
_NOT_THE_PLUGIN = tuple(
    os.path.realpath(path) + os.sep for path in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if path
)


def _handler_frame(frames):
    """The innermost frame in the plugin's own code: an error raised inside the SDK or json.dumps is
    reported where the handler called them, the line its author can change."""
    sdk = os.path.realpath(__file__)
    for frame in reversed(frames):
        path = os.path.realpath(frame.filename)
        if path != sdk and not path.startswith(_NOT_THE_PLUGIN):
            return frame
    return frames[-1]


def _errno_data(error):
    """{"errno": name} for an OSError that carries a known errno, else None."""
    code = getattr(error, "errno", None) if isinstance(error, OSError) else None
    name = errno.errorcode.get(code) if isinstance(code, int) else None
    return {"errno": name} if name else None


def invalid_input(message):
    return PluginError(INVALID_INPUT, message)


def source_changed(message="source changed while it was read"):
    return PluginError(SOURCE_CHANGED, message)


def limit_exceeded(message):
    return PluginError(LIMIT_EXCEEDED, message)


def log(message):
    """Write one line to stderr, the plugin's log."""
    sys.stderr.write(str(message).rstrip("\n") + "\n")
    sys.stderr.flush()


class Context(object):
    """What a handler may ask of the host while its request is in flight."""

    def __init__(self, plugin, request_id):
        self._plugin = plugin
        self._request_id = request_id

    @property
    def cancelled(self):
        """True once the host has cancelled this request (its deadline passed)."""
        return self._request_id in self._plugin._cancelled

    def score(self, candidates):
        """host/score: scores for these line indexes from the configured scorer."""
        return self._plugin._call_host("host/score", {"candidates": list(candidates)})

    def propose(self, strategy_id):
        """host/propose: another strategy's plan, validated by the host."""
        return self._plugin._call_host("host/propose", {"strategy_id": strategy_id})

    def read_items(self, line_indexes, max_bytes_per_item=None):
        """host/read_items: bounded record content (needs read_content in the manifest)."""
        params = {"line_indexes": list(line_indexes)}
        if max_bytes_per_item is not None:
            params["max_bytes_per_item"] = max_bytes_per_item
        return self._plugin._call_host("host/read_items", params)

    def log(self, level, message):
        """host/log: a log line the host shows with the call (level: debug, info, warn, error)."""
        if level not in LOG_LEVELS:
            # The host drops a notification it cannot read, and cannot answer one: without this the
            # line would vanish with no word to the author.
            raise ValueError("log level must be one of %s, not %r" % (", ".join(LOG_LEVELS), level))
        self._plugin._send({"jsonrpc": "2.0", "method": "host/log", "params": {"level": level, "message": str(message)[:4096]}})

    def progress(self, done, total=None, message=None):
        """$/progress: how far the call has got (whole counts; message cut to the 256 characters the host takes)."""
        if message is not None:
            message = str(message)[:256]
        self._plugin._send({"jsonrpc": "2.0", "method": "$/progress", "params": {"done": done, "total": total, "message": message}})


class _Provider(object):
    """Handlers of one provider id; register them with the decorators."""

    def __init__(self, info):
        self.info = info
        self.handlers = {}

    def _register(self, name):
        def decorate(fn):
            self.handlers[name] = fn
            return fn

        return decorate

    def discover(self, fn):
        return self._register("discover")(fn)

    def identify(self, fn):
        return self._register("identify")(fn)

    def usage(self, fn):
        return self._register("usage")(fn)

    def parse(self, fn):
        return self._register("parse")(fn)

    def render(self, fn):
        return self._register("render")(fn)

    def verify(self, fn):
        return self._register("verify")(fn)

    def fork_target(self, fn):
        return self._register("fork_target")(fn)


class Plugin(object):
    def __init__(self, plugin_id, version, stdin=None, stdout=None):
        self.id = plugin_id
        self.version = version
        self._in = stdin
        self._out = stdout
        self._strategies = {}
        self._scorers = {}
        self._providers = {}
        self._next_id = 0
        # Responses that arrived for an outer wait while an inner one was reading.
        self._responses = {}
        self._cancelled = set()
        self._exit = False

    # Registration -------------------------------------------------------------------------------

    def strategy(self, strategy_id, description="", kind="file", params_schema=None, provider_ids=None, uses_scorer=False):
        # uses_scorer=True: the strategy calls ctx.score, so the host starts the scorer early.
        def decorate(fn):
            info = {"id": strategy_id, "description": description, "kind": kind}
            if params_schema is not None:
                info["params_schema"] = params_schema
            if provider_ids is not None:
                info["provider_ids"] = list(provider_ids)
            if uses_scorer:
                info["uses_scorer"] = True
            self._strategies[strategy_id] = (info, fn)
            return fn

        return decorate

    def scorer(self, scorer_id, description=""):
        def decorate(fn):
            self._scorers[scorer_id] = ({"id": scorer_id, "description": description}, fn)
            return fn

        return decorate

    def provider(self, provider_id, display_name, **info):
        entry = _Provider(dict({"id": provider_id, "display_name": display_name}, **info))
        self._providers[provider_id] = entry
        return entry

    # The loop -----------------------------------------------------------------------------------

    def serve(self):
        """Serve requests until the host sends exit or closes stdin."""
        if self._in is None:
            self._in = sys.stdin.buffer
        if self._out is None:
            self._out = sys.stdout.buffer
            # Anything printed by mistake would corrupt the protocol; send it to the log instead.
            sys.stdout = sys.stderr
        while not self._exit:
            message = self._read()
            if message is None:
                break
            self._handle(message)

    def _read(self):
        """The next message from stdin, or None at end of input. Lines that are not JSON are answered with a parse error."""
        while True:
            line = self._in.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                log("gobstopper_sdk: ignoring a line that is not JSON")
                self._send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "not JSON"}})
                continue
            if not isinstance(message, dict):
                self._send({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "not a JSON-RPC object"}})
                continue
            return message

    def _send(self, message):
        self._write(_encode(message))

    def _write(self, data):
        self._out.write(data.encode("utf-8") + b"\n")
        self._out.flush()

    def _handle(self, message):
        method = message.get("method")
        if method is None:
            # A response nobody is waiting for now; keep it in case an outer wait needs it.
            if "id" in message:
                self._responses[message["id"]] = message
            return
        if "id" not in message:
            self._notification(method, message.get("params"))
            return
        request_id = message["id"]
        try:
            if request_id in self._cancelled:
                raise PluginError(REQUEST_CANCELLED, "cancelled before it started")
            result = self._dispatch(method, message.get("params"), request_id)
            try:
                answer = _encode({"jsonrpc": "2.0", "id": request_id, "result": result})
            except (TypeError, ValueError) as error:
                # Where json.dumps stopped says nothing of the handler; what it could not hold does.
                raise PluginError(INTERNAL_ERROR, "the %s handler returned a result JSON cannot hold: %s" % (method, error))
            self._write(answer)
        except PluginError as error:
            self._send({"jsonrpc": "2.0", "id": request_id, "error": error.answer()})
        except Exception as error:  # a bug in the handler, or the file system: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            # The host shows this message, not the traceback on stderr: name where it happened.
            where = _handler_frame(traceback.extract_tb(error.__traceback__))
            text = "%s: %s (at %s:%d in %s)" % (type(error).__name__, error, os.path.basename(where.filename), where.lineno, where.name)
            self._send({"jsonrpc": "2.0", "id": request_id, "error": PluginError(INTERNAL_ERROR, text[:1000], _errno_data(error)).answer()})
        finally:
            self._cancelled.discard(request_id)

    def _notification(self, method, params):
        if method == "exit":
            self._exit = True
        elif method == "$/cancelRequest" and isinstance(params, dict) and "id" in params:
            self._cancelled.add(params["id"])

    def _dispatch(self, method, params, request_id):
        ctx = Context(self, request_id)
        if method == "initialize":
            return self._initialize(params)
        if method == "shutdown":
            return None
        if not isinstance(params, dict):
            raise PluginError(INVALID_PARAMS, "%s needs params" % method)
        if method == "strategy/propose":
            entry = self._strategies.get(params.get("strategy_id"))
            if entry is None:
                raise PluginError(NOT_SUPPORTED, "strategy %s is not provided by this plugin" % params.get("strategy_id"))
            return entry[1](params, ctx)
        if method == "scorer/score":
            entry = self._scorers.get(params.get("scorer_id"))
            if entry is None:
                raise PluginError(NOT_SUPPORTED, "scorer %s is not provided by this plugin" % params.get("scorer_id"))
            return entry[1](params, ctx)
        if method in PROVIDER_METHODS:
            provider = self._providers.get(params.get("provider_id"))
            handler = provider.handlers.get(PROVIDER_METHODS[method]) if provider else None
            if handler is None:
                raise PluginError(NOT_SUPPORTED, "provider %s %s is not provided by this plugin" % (params.get("provider_id"), method))
            return handler(params, ctx)
        raise PluginError(METHOD_NOT_FOUND, "unknown method %s" % method)

    def _initialize(self, params):
        offered = (params or {}).get("protocol_versions") or []
        if PROTOCOL_VERSION not in offered:
            raise PluginError(NOT_SUPPORTED, "plugin speaks protocol %d, host offered %s" % (PROTOCOL_VERSION, offered))
        return {
            "protocol_version": PROTOCOL_VERSION,
            "plugin": {"id": self.id, "version": self.version},
            "providers": [p.info for p in self._providers.values()],
            "strategies": [info for info, _ in self._strategies.values()],
            "scorers": [info for info, _ in self._scorers.values()],
        }

    def _call_host(self, method, params):
        """Send a request to the host and block until its response arrives.

        While waiting, requests from the host are served at once (a host callback may call this
        same plugin again, e.g. host/propose of another of its strategies), cancellations are
        recorded, and responses meant for an outer wait are kept for it.
        """
        self._next_id += 1
        request_id = "py-%d" % self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            response = self._responses.pop(request_id, None)
            if response is None:
                message = self._read()
                if message is None:
                    raise HostError(INTERNAL_ERROR, "the host closed the connection")
                if message.get("method") is not None or message.get("id") != request_id:
                    self._handle(message)
                    if self._exit:
                        raise HostError(INTERNAL_ERROR, "the host asked the plugin to exit")
                    continue
                response = message
            if "error" in response and response["error"] is not None:
                error = response["error"]
                raise HostError(error.get("code"), error.get("message"))
            return response.get("result")
