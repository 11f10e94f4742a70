"""The command line, as a subprocess: the startup line, flags, errors and their exit status, Ctrl-C."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest

from .helpers import PYTHON_DIR, Process, bridge_command, has_module, message_logs, request

HAS_RAY = has_module("ray")
SERVING = re.compile(r"^rollout-lab-bridge: serving (\S+) at (http://127\.0\.0\.1:\d+) \(paste this URL into the lab: "
                     r"Environment → Remote environment \(HTTP\) → Connect\)$")


def run(*args, cwd=PYTHON_DIR, timeout=60):
    return subprocess.run(bridge_command(*args), cwd=cwd, capture_output=True, text=True, encoding="utf-8",
                          timeout=timeout)


class Serving(unittest.TestCase):
    def start(self, *args, **kwargs):
        process = Process(args, **kwargs)
        self.addCleanup(process.stop)
        return process, process.wait_for_url()

    def test_startup_line_and_calls(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "config.json")
            with open(config, "w") as f:
                json.dump({"greeting": "from config"}, f)
            process, url = self.start("tests.examples.plain_env:EchoGame", "--port", "0", "--config", config,
                                      "--dataset", "tests.examples.datasets:make_dataset", "--task-name", "echo")
            self.assertEqual(len(process.lines), 1, process.lines)
            match = SERVING.match(process.lines[0])
            self.assertIsNotNone(match, process.lines[0])
            self.assertEqual(match.groups(), ("tests.examples.plain_env:EchoGame", url))
            status, _, info = request(url + "/info")
            self.assertEqual((status, info["name"], info["bridge"]["target"]),
                             (200, "echo", "tests.examples.plain_env:EchoGame"))
            status, _, body = request(url + "/step", {"message_log_batch": message_logs("yes"), "metadata": [None]})
            self.assertEqual((status, body["observations"][0]["content"]), (200, "from config 1"))
            status, _, body = request(url + "/dataset", {"task_name": "echo", "size": 2, "seed": 1, "config": {}})
            self.assertEqual((status, len(body["data"]), body["data"][0]["task_name"]), (200, 2, "echo"))

    def test_ray_actor_line(self):
        process, url = self.start("tests.examples.ray_env:CountingActor", "--port", "0")
        self.assertEqual(len(process.lines), 2, process.lines)
        if HAS_RAY:
            expected = "rollout-lab-bridge: CountingActor is a Ray actor class; Ray is installed: it runs as a Ray actor"
        else:
            expected = ("rollout-lab-bridge: CountingActor is a Ray actor class; Ray is not installed: it runs in this "
                        "process through the bridge's stand-in ray module")
        self.assertEqual(process.lines[0], expected)
        self.assertIsNotNone(SERVING.match(process.lines[1]))
        status, _, body = request(url + "/step", {"message_log_batch": message_logs("a"), "metadata": [None]})
        self.assertEqual((status, body["rewards"]), (200, [1.0]))

    def test_module_in_the_current_directory(self):
        """Imported from the cwd even where the interpreter would not put it on sys.path (isolated mode, as the
        console script)."""
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "my_local_env.py"), "w") as f:
                f.write(textwrap.dedent('''
                    class LocalEnv:
                        """Lives in the cwd."""
                        def step(self, message_log_batch, metadata):
                            n = len(metadata)
                            return ([{"role": "environment", "content": "local"}] * n, [None] * n, None,
                                    [1.0] * n, [True] * n, None)
                    '''))
            code = (f"import sys; sys.path.append({PYTHON_DIR!r}); from rollout_lab_bridge.cli import main; "
                    "sys.exit(main())")
            command = [sys.executable, "-I", "-c", code, "my_local_env:LocalEnv", "--port", "0"]
            process, url = self.start(cwd=tmp, command=command)
            self.assertEqual(request(url + "/info")[2]["description"], "Lives in the cwd.")

    @unittest.skipIf(sys.platform == "win32", "SIGINT")
    def test_ctrl_c_exits_cleanly(self):
        process, url = self.start("tests.examples.plain_env:EchoGame", "--port", "0")
        process.proc.send_signal(signal.SIGINT)
        self.assertEqual(process.proc.wait(30), 0)
        self.assertNotIn("Traceback", process.proc.stderr.read())


class Flags(unittest.TestCase):
    def test_help(self):
        result = run("--help")
        self.assertEqual(result.returncode, 0)
        for flag in ("TARGET", "--config", "--port", "--host", "--dataset", "--task-name", "--allow-origin",
                     "example:", "python -m rollout_lab_bridge my_pkg.envs:MyEnv"):
            self.assertIn(flag, result.stdout)

    def test_bad_targets_exit_2(self):
        cases = [
            ("tests.examples.nothing_here:X", "no module named 'tests.examples.nothing_here'"),
            ("tests.examples.plain_env:Missing", "tests.examples.plain_env has no attribute 'Missing'"),
            ("tests.examples.plain_env:not_a_class", "is a function, not a class"),
            ("no_colon", "TARGET must be module.path:Name"),
        ]
        for target, expected in cases:
            result = run(target, "--port", "0")
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(expected, result.stderr)
            self.assertNotIn("serving", result.stdout)
        result = run("tests.examples.plain_env:EchoGame", "--port", "0", "--dataset", "tests.examples.datasets:nope")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--dataset tests.examples.datasets:nope: tests.examples.datasets has no attribute 'nope'",
                      result.stderr)

    def test_bad_config_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.json")
            with open(path, "w") as f:
                f.write('{\n  "a": 1,\n  "b": oops\n}\n')
            result = run("tests.examples.plain_env:EchoGame", "--config", path)
            self.assertEqual(result.returncode, 2)
            self.assertIn(f"--config {path}: invalid JSON at line 3, column 8", result.stderr)
            with open(path, "w") as f:
                f.write("[1, 2]")
            result = run("tests.examples.plain_env:EchoGame", "--config", path)
            self.assertEqual(result.returncode, 2)
            self.assertIn("expected a JSON object", result.stderr)
            result = run("tests.examples.plain_env:EchoGame", "--config", os.path.join(tmp, "missing.json"))
            self.assertEqual(result.returncode, 2)
            self.assertIn("missing.json: cannot read it", result.stderr)

    def test_constructor_error_exit_2_with_traceback(self):
        result = run("tests.examples.plain_env:BrokenInit", "--port", "0")
        self.assertEqual(result.returncode, 2)
        self.assertIn("Traceback", result.stderr)
        self.assertIn("plain_env.py", result.stderr)
        self.assertIn("BrokenInit({}) failed: RuntimeError: no board today", result.stderr)

    def test_port_in_use_exit_2(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            result = run("tests.examples.plain_env:EchoGame", "--port", str(port))
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"cannot listen on 127.0.0.1:{port}", result.stderr)
