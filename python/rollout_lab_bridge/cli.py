"""The command line: ``python -m rollout_lab_bridge TARGET [options]`` (or ``rollout-lab-bridge``)."""

import argparse
import json
import os
import sys

from . import __version__, loader, server

DESCRIPTION = """\
Serve a NeMo-RL-style environment class over Rollout Lab's HTTP remote-environment protocol
(GET /info, POST /dataset, POST /step, POST /post_process), so the lab in the browser (or a Node run) can
step it. A Ray actor class (@ray.remote) is created as a Ray actor when Ray is installed, and run in this
process through the bridge's stand-in ray module when it is not."""

EPILOG = """\
example:
  python -m rollout_lab_bridge my_pkg.envs:MyEnv --config config.json --dataset my_pkg.data:make_dataset

  then, in the lab: Environment -> Remote environment (HTTP) -> the printed URL -> Connect.
  Stop it with Ctrl-C."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="rollout-lab-bridge", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "target", metavar="TARGET",
        help="the environment class, as module.path:ClassName (imported from the current directory or sys.path); "
             "a plain class or a Ray actor class")
    parser.add_argument(
        "--config", metavar="FILE",
        help="a JSON file holding an object, passed as the single argument of the constructor (MyEnv(config)); "
             "without it the constructor is called with no arguments if it takes none, else with {}")
    parser.add_argument(
        "--port", type=int, default=8765,
        help="the port to listen on (default 8765; 0 picks a free one, printed at start)")
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="the address to bind (default 127.0.0.1: only this machine can connect)")
    parser.add_argument(
        "--dataset", metavar="MODULE:FUNCTION",
        help="a function giving the dataset for POST /dataset: called with those of size, seed, config, "
             "task_name its signature accepts, it returns a list of datum dicts (task_name, message_log, "
             "extra_env_info, stop_strings, ...); without it /dataset answers 404 and the scenario gives samples")
    parser.add_argument(
        "--task-name", metavar="NAME",
        help="the task name /info reports (name, default_task_name); default: the class's `name` attribute, "
             "else its class name in snake_case")
    parser.add_argument(
        "--allow-origin", metavar="ORIGIN", action="append", default=[],
        help="also let the page at ORIGIN (e.g. https://lab.example.org) call the bridge; repeatable; '*' "
             "allows any origin. Loopback origins (http://localhost:*, http://127.0.0.1:*, http://[::1]:*) are "
             "always allowed; requests without an Origin header (Node, curl) are always served")
    parser.add_argument("--version", action="version", version=f"rollout-lab-bridge {__version__}")
    return parser


def fail(message, details=None):
    if details:
        sys.stderr.write(details.rstrip() + "\n")
    print(f"rollout-lab-bridge: error: {message}", file=sys.stderr, flush=True)
    return 2


def say(text):
    """A line on stdout, flushed; arrows spelled -> where stdout cannot encode them."""
    try:
        print(text, flush=True)
    except UnicodeEncodeError:
        print(text.replace("→", "->"), flush=True)


def read_config(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as error:
        raise loader.LoadError(f"--config {path}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise loader.LoadError(f"--config {path}: not UTF-8 text: {error}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise loader.LoadError(f"--config {path}: invalid JSON at line {error.lineno}, column {error.colno}: "
                               f"{error.msg}") from None
    if not isinstance(config, dict):
        raise loader.LoadError(f"--config {path}: expected a JSON object, got {type(config).__name__} "
                               f"{json.dumps(config)[:40]}")
    return config


def main(argv=None):
    args = build_parser().parse_args(argv)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 0


def run(args):
    if not 0 <= args.port <= 65535:
        return fail(f"--port {args.port}: expected 0 to 65535")
    try:
        config = read_config(args.config) if args.config is not None else None
        environment = loader.load_environment(args.target, config, args.config is not None)
        dataset = loader.load_dataset_function(args.dataset) if args.dataset else None
    except loader.LoadError as error:
        return fail(str(error), error.details)
    bridge = server.Bridge(environment, dataset, args.dataset, args.task_name)
    try:
        httpd = server.make_server(bridge, args.host, args.port, args.allow_origin, server.stderr_log)
    except OSError as error:
        return fail(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
    line = environment.runs_as()
    if line:
        say(f"rollout-lab-bridge: {line}")
    say(f"rollout-lab-bridge: serving {args.target} at {httpd.url} (paste this URL into the lab: Environment → "
        "Remote environment (HTTP) → Connect)")
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
