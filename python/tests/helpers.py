"""Starting a bridge in this process (port 0, a thread) and talking HTTP to it with urllib."""

import json
import os
import subprocess
import sys
import threading
import unittest
import urllib.error
import urllib.request

from rollout_lab_bridge import loader, server

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def has_module(name):
    try:
        __import__(name)
        return True
    except Exception:
        return False


HAS_TORCH = has_module("torch")


class Running:
    """A bridge served on 127.0.0.1:<free port> in a thread; ``call`` talks to it."""

    def __init__(self, target, config=None, dataset=None, task_name=None, allow_origins=()):
        environment = loader.load_environment(target, config)
        function = loader.load_dataset_function(dataset) if dataset else None
        self.bridge = server.Bridge(environment, function, dataset, task_name)
        self.server = server.make_server(self.bridge, "127.0.0.1", 0, allow_origins)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = self.server.url

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    def call(self, path, body=None, method=None, headers=None, raw=None):
        return request(self.url + path, body, method, headers, raw)


def request(url, body=None, method=None, headers=None, raw=None):
    """``(status, headers, parsed JSON or None)``."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    all_headers = {"Content-Type": "application/json"} if data is not None else {}
    all_headers.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method or ("POST" if data is not None else "GET"),
                                 headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            status, answer_headers, text = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, answer_headers, text = error.code, error.headers, error.read()
    return status, answer_headers, (json.loads(text) if text else None)


class BridgeCase(unittest.TestCase):
    """A test case with ``self.start(target, ...)`` that closes what it started."""

    def start(self, target, **kwargs):
        running = Running(target, **kwargs)
        self.addCleanup(running.close)
        return running


def message_logs(*lasts):
    return [[{"role": "user", "content": "hello"}, {"role": "assistant", "content": last}] for last in lasts]


def bridge_command(*args):
    return [sys.executable, "-m", "rollout_lab_bridge", *args]


class Process:
    """``python -m rollout_lab_bridge ...`` as a subprocess; ``wait_for_url`` reads its startup line."""

    def __init__(self, args, cwd=PYTHON_DIR, env=None, command=None):
        full_env = dict(os.environ, PYTHONUNBUFFERED="1")
        full_env.update(env or {})
        self.proc = subprocess.Popen(command or bridge_command(*args), cwd=cwd, env=full_env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.lines = []

    def wait_for_url(self, timeout=30):
        """The URL of the ``serving ... at URL`` line (read within ``timeout`` s), or an AssertionError."""
        result = {}

        def read():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                if " serving " in line and " at http" in line:
                    result["url"] = line.split(" at ", 1)[1].split(" ", 1)[0]
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if "url" not in result:
            self.stop()
            raise AssertionError(f"no startup line within {timeout} s; stdout: {self.lines}; "
                                 f"stderr: {self.proc.stderr.read()}")
        return result["url"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except Exception:
                pass
