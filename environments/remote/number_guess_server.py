#!/usr/bin/env python3
"""Number guess over HTTP: the remote-environment protocol (docs/remote-environments.md) in plain Python.

    python3 environments/remote/number_guess_server.py [--port 8765] [--host 127.0.0.1]

then, in the lab, pick "Remote environment (HTTP)" with the URL http://127.0.0.1:8765, or run a scenario with
``"envs": {"number_guess": {"env": "http", "config": {"url": "http://127.0.0.1:8765"}}}``.

The game is the one of environments/number_guess.js, turn for turn and with the same seeded secrets, so a
scenario gives the same rollout against either. Standard library only; copy it and put your environment in
``step`` and ``dataset``. Every answer carries CORS headers: the lab calls from the browser.
"""

import argparse
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP = ["</guess>"]
GUESS = re.compile(r"<guess>\s*(-?\d+)\s*</guess>")
MASK = 0xFFFFFFFF


def imul(a, b):
    """JavaScript's Math.imul: 32-bit multiplication, result as a signed 32-bit integer."""
    r = (a * b) & MASK
    return r - (1 << 32) if r & 0x80000000 else r


def random(seed):
    """mulberry32, bit for bit as in number_guess.js."""
    state = [seed & MASK]

    def next_value():
        state[0] = (state[0] + 0x6D2B79F5) & MASK
        t = state[0]
        t = imul(t ^ (t >> 15), t | 1) & MASK
        t = (t ^ ((t + imul(t ^ (t >> 7), t | 61)) & MASK)) & MASK
        return ((t ^ (t >> 14)) & MASK) / 4294967296

    return next_value


def setting(config, key, fallback):
    value = config.get(key, fallback)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{key}: expected a positive integer, got {json.dumps(value)}")
    return value


def dataset(request):
    config = request.get("config") or {}
    unknown = [k for k in config if k not in ("max_number", "max_guesses")]
    if unknown:
        raise ValueError(f"unknown key '{unknown[0]}' (expected: max_number, max_guesses)")
    max_number = setting(config, "max_number", 20)
    max_guesses = setting(config, "max_guesses", 5)
    next_value = random(request["seed"])
    data = []
    for idx in range(request["size"]):
        prompt = (
            f"<|im_start|>user\nI am thinking of a number from 1 to {max_number}. Guess it: answer "
            f"<guess>N</guess>. You have {max_guesses} guesses.<|im_end|>\n<|im_start|>assistant\n"
        )
        data.append({
            "task_name": request["task_name"],
            "idx": idx,
            "message_log": [{"role": "user", "content": prompt}],
            "extra_env_info": {"secret": 1 + int(next_value() * max_number), "max_number": max_number,
                               "max_guesses": max_guesses, "guesses": []},
            "stop_strings": STOP,
        })
    return {"data": data}


def turn(log, state):
    last = log[-1] if log else None
    text = last["content"] if last and last["role"] == "assistant" else ""
    match = GUESS.search(text)
    guesses = state["guesses"] + [int(match.group(1))] if match else state["guesses"]
    following = dict(state, guesses=guesses)

    def out(message, reward, terminated):
        return ({"role": "environment", "content": f"<environment>{message}</environment>\n"}, reward, terminated,
                None if terminated else following)

    if not match:
        return out("Answer with <guess>N</guess>.", 0, len(guesses) >= state["max_guesses"])
    guess = int(match.group(1))
    if guess == state["secret"]:
        return out(f"correct: {guess}", 1, True)
    hint = "higher" if guess < state["secret"] else "lower"
    left = state["max_guesses"] - len(guesses)
    if left > 0:
        return out(f"{hint} ({left} guess{'' if left == 1 else 'es'} left)", 0, False)
    return out(f"{hint}; no guesses left", 0, True)


def step(request):
    turns = [turn(log, meta) for log, meta in zip(request["message_log_batch"], request["metadata"])]
    return {
        "observations": [t[0] for t in turns],
        "metadata": [t[3] for t in turns],
        "next_stop_strings": [STOP for _ in turns],
        "rewards": [t[1] for t in turns],
        "terminateds": [t[2] for t in turns],
        "answers": None,
    }


INFO = {
    "name": "number_guess",
    "title": "Number guess (Python, over HTTP)",
    "description": "Guess the secret number: <guess>N</guess>, answered with higher/lower.",
    "default_task_name": "number_guess",
}
ROUTES = {"/dataset": dataset, "/step": step}


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(data)

    def do_OPTIONS(self):  # the browser's CORS preflight for a JSON POST
        self.send_response(204)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "content-type")
        self.end_headers()

    def do_GET(self):
        if self.path.rstrip("/") == "/info":
            self.answer(200, INFO)
        else:
            self.answer(404, {"error": f"no route {self.path}"})

    def do_POST(self):
        route = ROUTES.get(self.path.rstrip("/"))
        if route is None:
            return self.answer(404, {"error": f"no route {self.path}"})
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.answer(200, route(request))
        except Exception as e:  # the lab shows this text on the samples of the failed call
            self.answer(500, {"error": f"{type(e).__name__}: {e}"})

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    # An async rollout sends every sample's step at once: the default backlog of 5 drops a burst's connections.
    request_queue_size = 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = Server((args.host, args.port), Handler)
    print(f"number_guess listening on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
