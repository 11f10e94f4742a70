"""The HTTP side: Rollout Lab's remote-environment protocol (docs/remote-environments.md) for one Environment.

``GET /info``, ``POST /dataset``, ``POST /step``, ``POST /post_process``; JSON in and out, CORS for the lab's page
(loopback origins allowed by default, others with --allow-origin). ``Bridge`` answers the calls, ``make_server``
serves a Bridge with a ThreadingHTTPServer.
"""

import json
import re
import select
import socket
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from . import __version__, convert, loader

LOOPBACK_ORIGIN = re.compile(r"^http://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$", re.IGNORECASE)


class Answer(Exception):
    """An HTTP answer other than 200: ``status`` and the JSON ``body``."""

    def __init__(self, status, body):
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body


def _bad_request(message):
    return Answer(400, {"error": message})


def _kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class Bridge:
    """Answers the protocol's calls for one Environment (and an optional dataset function)."""

    def __init__(self, environment, dataset=None, dataset_target=None, task_name=None):
        self.environment = environment
        self.dataset = dataset
        self.dataset_target = dataset_target
        self.torch = loader.torch_module()
        self.batch_class = loader.batch_class()
        cls = environment.cls
        own_name = getattr(cls, "name", None)
        self.name = task_name or (own_name if isinstance(own_name, str) and own_name else loader.snake_case(cls.__name__))
        # the dataset function runs under the environment's lock too: user code is not assumed thread-safe
        self.lock = environment.lock

    def info(self):
        cls = self.environment.cls
        return {
            "name": self.name,
            "title": cls.__name__,
            "description": loader.first_paragraph(cls.__dict__.get("__doc__")),
            "default_task_name": self.name,
            "post_process": self.environment.has_method("global_post_process_and_metrics"),
            "bridge": {
                "version": __version__,
                "target": self.environment.target,
                "ray": self.environment.ray_kind,
                "torch": self.torch is not None,
            },
        }

    # ------------------------------------------------------------------ /dataset

    def make_dataset(self, body):
        if self.dataset is None:
            raise Answer(404, {"error": "this bridge was started without --dataset: give the scenario's samples, "
                                        "or restart with --dataset module:function"})
        if not isinstance(body, dict):
            raise _bad_request(f"the body of /dataset is {_kind(body)}, expected an object "
                               "{task_name, size, seed, config}")
        checks = {
            "task_name": (lambda v: isinstance(v, str), "a string"),
            "size": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a non-negative integer"),
            "seed": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
            "config": (lambda v: v is None or isinstance(v, dict), "an object or null"),
        }
        available = {}
        for key, (check, expected) in checks.items():
            if key in body:
                if not check(body[key]):
                    raise _bad_request(f"/dataset: {key} is {json.dumps(body[key])}, expected {expected}")
                available[key] = body[key]
        available.setdefault("task_name", self.name)
        arguments = loader.dataset_arguments(self.dataset, available)
        function_name = getattr(self.dataset, "__name__", self.dataset_target or "the dataset function")
        with self.lock:
            try:
                data = self.dataset(**arguments)
            except Exception as error:
                message, text = loader.describe_exception(error)
                raise Answer(500, {"error": message, "traceback": text}) from None
        if not isinstance(data, list):
            raise Answer(500, {"error": f"{function_name} (--dataset {self.dataset_target}) returned "
                                        f"{convert._describe(data)}, expected a list of datum dicts"})
        task_name = body.get("task_name") if isinstance(body.get("task_name"), str) else self.name
        out = []
        for i, datum in enumerate(data):
            if not isinstance(datum, dict):
                raise Answer(500, {"error": f"{function_name} returned data[{i}] = {convert._describe(datum)}, "
                                            "expected a dict (a datum spec)"})
            try:
                datum = convert.to_json(datum, f"data[{i}]")
            except convert.ConversionError as error:
                raise Answer(500, {"error": f"{function_name} returned a value the bridge cannot send: {error}"}) from None
            if datum.get("task_name") is None:
                datum["task_name"] = task_name
            datum.setdefault("stop_strings", None)
            out.append(datum)
        return {"data": out}

    # ------------------------------------------------------------------ /step

    def step(self, body, wanted=None):
        if not isinstance(body, dict):
            raise _bad_request(f"the body of /step is {_kind(body)}, expected an object "
                               "{message_log_batch, metadata}")
        logs = body.get("message_log_batch")
        metadata = body.get("metadata")
        if not isinstance(logs, list):
            raise _bad_request(f"/step: message_log_batch is {_kind(logs)}, expected an array of message logs")
        for i, log in enumerate(logs):
            if not isinstance(log, list):
                raise _bad_request(f"/step: message_log_batch[{i}] is {_kind(log)}, expected an array of messages")
            for j, message in enumerate(log):
                if not isinstance(message, dict):
                    raise _bad_request(f"/step: message_log_batch[{i}][{j}] is {_kind(message)}, expected an object "
                                       "{role, content}")
                for key in ("role", "content"):
                    if not isinstance(message.get(key), str):
                        raise _bad_request(f"/step: message_log_batch[{i}][{j}].{key} is {_kind(message.get(key))}, "
                                           "expected a string")
        if not isinstance(metadata, list):
            raise _bad_request(f"/step: metadata is {_kind(metadata)}, expected an array (one entry per sample)")
        if len(metadata) != len(logs):
            raise _bad_request(f"/step: metadata has {len(metadata)} entries for {len(logs)} message logs")
        for i, meta in enumerate(metadata):
            if meta is not None and not isinstance(meta, dict):
                raise _bad_request(f"/step: metadata[{i}] is {_kind(meta)}, expected an object or null")
        result = self._call("step", logs, metadata, wanted=wanted)
        try:
            return convert.environment_return_to_json(result)
        except convert.ConversionError as error:
            raise Answer(500, {"error": f"{self.environment.name}.step returned a value the bridge cannot send: {error}"}) from None

    # ------------------------------------------------------------------ /post_process

    def post_process(self, body, wanted=None):
        method = "global_post_process_and_metrics"
        if not self.environment.has_method(method):
            raise Answer(404, {"error": f"{self.environment.name} has no {method}"})
        if not isinstance(body, dict) or not isinstance(body.get("batch"), dict):
            raise _bad_request("the body of /post_process must be an object {batch: {column: [one value per "
                               "sample], ...}}")
        columns = body["batch"]
        lengths = set()
        for name, values in columns.items():
            if not isinstance(values, list):
                raise _bad_request(f"/post_process: batch.{name} is {_kind(values)}, expected an array "
                                   "(one value per sample)")
            lengths.add(len(values))
        if len(lengths) > 1:
            raise _bad_request(f"/post_process: the batch's columns have different lengths ({sorted(lengths)})")
        batch = convert.batch_from_json(columns, self.torch, self.batch_class)
        result = self._call(method, batch, wanted=wanted)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise Answer(500, {"error": f"{self.environment.name}.{method} returned {convert._describe(result)}, "
                                        "expected a tuple (batch, metrics)"})
        try:
            return {"metrics": convert.metrics_to_json(result[1])}
        except convert.ConversionError as error:
            raise Answer(500, {"error": f"{self.environment.name}.{method} returned a value the bridge cannot send: {error}"}) from None

    def _call(self, method, *args, wanted=None):
        try:
            return self.environment.call(method, *args, wanted=wanted)
        except loader.UserCodeError as error:
            raise Answer(500, {"error": error.error, "traceback": error.traceback_text}) from None


def origin_allowed(origin, allowed):
    """Loopback origins always; ``allowed`` adds exact origins, ``*`` any."""
    if LOOPBACK_ORIGIN.match(origin):
        return True
    return "*" in allowed or origin.rstrip("/") in {a.rstrip("/") for a in allowed}


class Handler(BaseHTTPRequestHandler):
    server_version = f"rollout-lab-bridge/{__version__}"

    def _origin(self):
        """``(origin or None, allowed)``."""
        origin = self.headers.get("Origin")
        if origin is None:
            return None, True
        return origin, origin_allowed(origin, self.server.allow_origins)

    def _cors(self, origin):
        if origin is not None:
            self.send_header("Access-Control-Allow-Origin", origin)
        self.send_header("Vary", "Origin")

    def _client_waiting(self):
        """Whether the lab still waits for this answer: it closes the connection when it gives up (its deadline)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return not readable or self.connection.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def answer(self, status, body, origin=None):
        try:
            data = convert.dumps(body).encode("utf-8")
        except ValueError as error:  # NaN / infinity slipped through
            status, data = 500, convert.dumps({"error": f"the answer could not be sent as JSON: {error}"}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self._cors(origin)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass  # the lab gave up on this call (its deadline): nothing to answer
        if status >= 500 and self.server.log is not None:
            self.server.log(f"{self.command} {self.path} -> HTTP {status}: {body.get('error')}"
                            + (f"\n{body['traceback']}" if body.get("traceback") else ""))

    def _refuse(self, origin):
        self.answer(403, {"error": f"origin {origin} is not allowed: restart the bridge with "
                                   f"--allow-origin {origin}"}, origin)

    def do_OPTIONS(self):  # the browser's CORS preflight for a JSON POST
        origin, allowed = self._origin()
        if not allowed:
            return self._refuse(origin)
        self.send_response(204)
        self._cors(origin)
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "content-type")
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _route(self):
        return urlsplit(self.path).path.rstrip("/") or "/"

    def do_GET(self):
        origin, allowed = self._origin()
        if not allowed:
            return self._refuse(origin)
        path = self._route()
        if path == "/info":
            return self.answer(200, self.server.bridge.info(), origin)
        if path in POST_ROUTES:
            return self.answer(405, {"error": f"{path} takes POST, not GET"}, origin)
        self.answer(404, {"error": f"no route GET {path} (the bridge serves GET /info, POST /dataset, POST /step, "
                                   "POST /post_process)"}, origin)

    def do_POST(self):
        origin, allowed = self._origin()
        if not allowed:
            return self._refuse(origin)
        path = self._route()
        route = POST_ROUTES.get(path)
        if route is None:
            status = 405 if path == "/info" else 404
            return self.answer(status, {"error": f"no route POST {path}" + (" (GET /info)" if status == 405 else
                                         " (the bridge serves GET /info, POST /dataset, POST /step, "
                                         "POST /post_process)")}, origin)
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError
        except ValueError:
            return self.answer(400, {"error": f"bad Content-Length {self.headers.get('Content-Length')!r}"}, origin)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            shown = "empty" if not raw else "not JSON"
            return self.answer(400, {"error": f"the body of POST {path} is {shown}: {error}"}, origin)
        try:
            call = getattr(self.server.bridge, route)
            answer = call(body) if route == "make_dataset" else call(body, wanted=self._client_waiting)
        except loader.Abandoned:
            self.close_connection = True
            if self.server.log is not None:
                self.server.log(f"POST {path}: not run: the lab stopped waiting for it (its deadline) before its turn")
            return
        except Answer as error:
            return self.answer(error.status, error.body, origin)
        except Exception as error:  # a bug of the bridge itself: still an answer, and the server keeps serving
            return self.answer(500, {"error": f"{type(error).__name__}: {error}",
                                     "traceback": traceback.format_exc()}, origin)
        self.answer(200, answer, origin)

    def log_message(self, format, *args):
        pass


POST_ROUTES = {"/dataset": "make_dataset", "/step": "step", "/post_process": "post_process"}


class BridgeServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # An async rollout sends every sample's step at once: the default backlog of 5 drops the connections of a
    # burst, which then hang until the lab's deadline.
    request_queue_size = 1024

    def __init__(self, address, bridge, allow_origins=(), log=None):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.bridge = bridge
        self.allow_origins = tuple(allow_origins)
        self.log = log
        super().__init__(address, Handler)

    @property
    def url(self):
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"


def make_server(bridge, host="127.0.0.1", port=8765, allow_origins=(), log=None):
    """A BridgeServer bound to ``host:port`` (0: a free port); call ``serve_forever()``."""
    return BridgeServer((host, port), bridge, allow_origins, log)


def serve_in_thread(server):
    thread = threading.Thread(target=server.serve_forever, name="rollout-lab-bridge", daemon=True)
    thread.start()
    return thread


def stderr_log(text):
    print(f"rollout-lab-bridge: {text}", file=sys.stderr, flush=True)
