"""The protocol served in this process: /info, /step, /dataset, /post_process, errors, Ray actor classes."""

import json
import socket
import threading
import time
import unittest

from rollout_lab_bridge import __version__, loader

from .helpers import HAS_TORCH, BridgeCase, has_module, message_logs

HAS_RAY = has_module("ray") and not getattr(__import__("ray"), "__rollout_lab_standin__", False) \
    if has_module("ray") else False


class Info(BridgeCase):
    def test_info_of_a_plain_class(self):
        running = self.start("tests.examples.plain_env:EchoGame")
        status, headers, body = running.call("/info")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        self.assertEqual(body, {
            "name": "echo_game",
            "title": "EchoGame",
            "description": 'Say yes: reward 1 when the last assistant message says "yes".',
            "default_task_name": "echo_game",
            "post_process": False,
            "bridge": {"version": __version__, "target": "tests.examples.plain_env:EchoGame", "ray": None,
                       "torch": HAS_TORCH},
        })

    def test_name_attribute_and_task_name_flag(self):
        self.assertEqual(self.start("tests.examples.plain_env:NoArgs").call("/info")[2]["name"], "custom_name")
        body = self.start("tests.examples.plain_env:NoArgs", task_name="mine").call("/info")[2]
        self.assertEqual((body["name"], body["default_task_name"]), ("mine", "mine"))
        self.assertEqual(self.start("tests.examples.plain_env:SeesConfig").call("/info")[2]["description"], "")

    def test_post_process_flag(self):
        body = self.start("tests.examples.post_process_env:WithMetrics").call("/info")[2]
        self.assertTrue(body["post_process"])
        self.assertEqual(body["description"], "Echo game with metrics.")

    def test_snake_case(self):
        self.assertEqual(loader.snake_case("MathEnvironment"), "math_environment")
        self.assertEqual(loader.snake_case("HTTPGame"), "http_game")
        self.assertEqual(loader.snake_case("Game2D"), "game2d")
        self.assertEqual(loader.snake_case("Env2Game"), "env2_game")
        self.assertEqual(loader.snake_case("already_snake"), "already_snake")


class Step(BridgeCase):
    def test_plain_step(self):
        running = self.start("tests.examples.plain_env:EchoGame", config={"greeting": "hey"})
        metadata = [{"turn": 0}, None]
        status, _, body = running.call("/step", {"message_log_batch": message_logs("yes", "no"), "metadata": metadata})
        self.assertEqual(status, 200, body)
        self.assertEqual(body, {
            "observations": [{"role": "environment", "content": "hey 1"}, {"role": "environment", "content": "hey 1"}],
            "metadata": [None, {"turn": 1, "calls": 1}],
            "next_stop_strings": [["</answer>"], ["</answer>"]],
            "rewards": [1.0, 0.0],
            "terminateds": [True, False],
            "answers": ["yes", None],
        })
        # state lives in the instance between calls; what step mutated was a copy
        body = running.call("/step", {"message_log_batch": message_logs("no"), "metadata": [{"turn": 0}]})[2]
        self.assertEqual(body["metadata"], [{"turn": 1, "calls": 2}])

    def test_constructor_arguments(self):
        body = self.start("tests.examples.plain_env:SeesConfig").call(
            "/step", {"message_log_batch": message_logs("x"), "metadata": [None]})[2]
        self.assertEqual(body["observations"][0]["content"], "None")  # cfg=None: called with no arguments
        body = self.start("tests.examples.plain_env:SeesConfig", config={"a": 1}).call(
            "/step", {"message_log_batch": message_logs("x"), "metadata": [None]})[2]
        self.assertEqual(body["observations"][0]["content"], "{'a': 1}")
        self.assertEqual(loader.constructor_args(loader.import_target("tests.examples.plain_env:EchoGame"), None,
                                                 False), ({},))
        # a dict return, terminateds as 0/1, without answers
        body = self.start("tests.examples.plain_env:NoArgs").call(
            "/step", {"message_log_batch": message_logs("x"), "metadata": [None]})[2]
        self.assertEqual((body["terminateds"], body["answers"], body["rewards"]), ([True], None, [0.5]))

    def test_dict_rewards(self):
        body = self.start("tests.examples.dict_rewards_env:ComponentsGame").call(
            "/step", {"message_log_batch": message_logs("a", "b"), "metadata": [None, None]})[2]
        self.assertEqual(body["rewards"], {"format": [1.0, 1.0], "correct": [0.0, 1.0]})
        self.assertEqual(body["answers"], ["x", "x"])

    def test_error_in_step(self):
        running = self.start("tests.examples.failing_env:Exploding")
        status, _, body = running.call("/step", {"message_log_batch": message_logs("a", "b"),
                                                 "metadata": [None, {"explode": True}]})
        self.assertEqual(status, 500)
        self.assertEqual(body["error"], "ValueError: the board exploded")
        self.assertIn("failing_env.py", body["traceback"])
        self.assertIn("in check_board", body["traceback"])
        self.assertIn("in step", body["traceback"])
        # the server keeps serving
        status, _, body = running.call("/step", {"message_log_batch": message_logs("a"), "metadata": [None]})
        self.assertEqual((status, body["rewards"]), (200, [1.0]))

    def test_conversion_errors_name_method_and_path(self):
        status, _, body = self.start("tests.examples.failing_env:NaNReward").call(
            "/step", {"message_log_batch": message_logs("a", "b"), "metadata": [None, None]})
        self.assertEqual(status, 500)
        self.assertEqual(body["error"], "NaNReward.step returned a value the bridge cannot send: rewards[1] is nan, "
                                        "not a finite number")
        status, _, body = self.start("tests.examples.failing_env:BadMetadata").call(
            "/step", {"message_log_batch": message_logs("a"), "metadata": [None]})
        self.assertEqual(status, 500)
        self.assertIn("metadata[0].board: cannot send an object of type Foo as JSON", body["error"])
        status, _, body = self.start("tests.examples.failing_env:NotAReturn").call(
            "/step", {"message_log_batch": message_logs("a"), "metadata": [None]})
        self.assertEqual(status, 500)
        self.assertIn("NotAReturn.step returned", body["error"])
        self.assertIn("expected an EnvironmentReturn", body["error"])

    def test_bad_requests(self):
        running = self.start("tests.examples.plain_env:EchoGame")
        cases = [
            (b"not json", "is not JSON"),
            (b"", "is empty"),
            (b"[1]", "the body of /step is an array"),
            (b'{"message_log_batch": 1, "metadata": []}', "message_log_batch is a number"),
            (b'{"message_log_batch": [[{"role": "user"}]], "metadata": [null]}',
             r"message_log_batch[0][0].content is null"),
            (b'{"message_log_batch": [[]], "metadata": []}', "metadata has 0 entries for 1 message logs"),
            (b'{"message_log_batch": [[]], "metadata": [3]}', "metadata[0] is a number"),
        ]
        for raw, expected in cases:
            status, _, body = running.call("/step", raw=raw)
            self.assertEqual(status, 400, raw)
            self.assertIn(expected, body["error"])

    def test_routes(self):
        running = self.start("tests.examples.plain_env:EchoGame")
        self.assertEqual(running.call("/nothing")[0], 404)
        self.assertEqual(running.call("/nothing", {})[0], 404)
        self.assertEqual(running.call("/step")[0], 405)
        self.assertEqual(running.call("/info/")[0], 200)
        self.assertEqual(running.call("/info?x=1")[0], 200)

    def test_overlapping_calls_are_serialized(self):
        running = self.start("tests.examples.ray_env:CountingActor", config={"start": 3})
        results = []

        def call():
            results.append(running.call("/step", {"message_log_batch": message_logs("a"), "metadata": [None]}))

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(sorted(r[2]["metadata"][0]["calls"] for r in results), list(range(1, 9)))
        self.assertFalse(any(r[2]["metadata"][0]["overlapping"] for r in results))


class Connections(BridgeCase):
    def test_a_burst_of_connections_waits_in_the_queue_instead_of_being_dropped(self):
        # An async rollout opens every sample's /step at once; with Python's default backlog (5) the connections
        # beyond it were dropped and hung until the lab's deadline.
        running = self.start("tests.examples.plain_env:EchoGame")
        running.server.shutdown()  # not accepting: every connection waits in the listen queue
        host, port = running.server.server_address[:2]
        sockets = []
        self.addCleanup(lambda: [s.close() for s in sockets])
        for _ in range(64):
            sockets.append(socket.create_connection((host, port), timeout=1))
        self.assertEqual(len(sockets), 64)

    def test_a_step_the_lab_gave_up_on_is_not_run_when_its_turn_comes(self):
        from tests.examples import plain_env
        plain_env.HeldEcho.entered, plain_env.HeldEcho.release = threading.Event(), threading.Event()
        self.addCleanup(plain_env.HeldEcho.release.set)
        running = self.start("tests.examples.plain_env:HeldEcho")
        logged = []
        running.server.log = logged.append
        body = {"message_log_batch": message_logs("a"), "metadata": [None]}
        first = threading.Thread(target=lambda: running.call("/step", body))
        first.start()
        self.assertTrue(plain_env.HeldEcho.entered.wait(30))
        # A second step waits for the environment (calls run one at a time); the lab gives up on it (its deadline
        # closes the connection) before its turn.
        host, port = running.server.server_address[:2]
        data = json.dumps(body).encode()
        with socket.create_connection((host, port), timeout=10) as abandoned:
            abandoned.sendall(b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        plain_env.HeldEcho.release.set()
        first.join(30)
        deadline = time.monotonic() + 30
        while not any("not run" in m for m in logged) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(logged, ["POST /step: not run: the lab stopped waiting for it (its deadline) before its turn"])
        self.assertEqual(running.bridge.environment.instance.calls, 1)
        # The bridge serves on.
        self.assertEqual(running.call("/step", body)[0], 200)
        self.assertEqual(running.bridge.environment.instance.calls, 2)


class RayActors(BridgeCase):
    def test_actor_class(self):
        running = self.start("tests.examples.ray_env:CountingActor", config={"start": 7})
        info = running.call("/info")[2]
        self.assertEqual(info["bridge"]["ray"], "ray" if HAS_RAY else "stand-in")
        self.assertEqual((info["name"], info["title"]), ("counting_actor", "CountingActor"))
        self.assertEqual(info["description"], "Counts its calls: state kept in the actor between calls.")
        for expected in (1, 2):
            status, _, body = running.call("/step", {"message_log_batch": message_logs("a", "b"),
                                                     "metadata": [None, None]})
            self.assertEqual(status, 200, body)
            self.assertEqual(body["rewards"], [float(expected)] * 2)
            self.assertEqual(body["metadata"][0]["start"], 7)
        self.assertIn("Ray actor class", running.bridge.environment.runs_as())

    def test_actor_class_with_options_and_error(self):
        running = self.start("tests.examples.ray_env:FailingActor")
        self.assertTrue(loader.is_actor_class(loader.import_target("tests.examples.ray_env:FailingActor")))
        status, _, body = running.call("/step", {"message_log_batch": message_logs("a"), "metadata": [{"explode": 1}]})
        self.assertEqual(status, 500)
        self.assertEqual(body["error"], "ValueError: the actor's board exploded")
        self.assertIn("ray_env.py", body["traceback"])
        self.assertIn("in step", body["traceback"])
        status, _, body = running.call("/step", {"message_log_batch": message_logs("a"), "metadata": [{"x": 1}]})
        self.assertEqual((status, body["metadata"]), (200, [{"x": 1}]))

    @unittest.skipIf(HAS_RAY, "real Ray is installed")
    def test_stand_in_is_installed_as_ray(self):
        import sys
        loader.load_environment("tests.examples.ray_env:CountingActor", {})
        self.assertTrue(getattr(sys.modules["ray"], "__rollout_lab_standin__", False))
        self.assertIs(sys.modules["ray.actor"].ActorClass, sys.modules["ray"].actor.ActorClass)

    def test_plain_class_has_no_ray(self):
        self.assertIsNone(self.start("tests.examples.plain_env:EchoGame").bridge.environment.runs_as())


class LoadErrors(unittest.TestCase):
    def test_messages(self):
        cases = [
            ("tests.examples.nothing_here:X", "no module named 'tests.examples.nothing_here'"),
            ("tests.examples.plain_env:Missing", "tests.examples.plain_env has no attribute 'Missing'"),
            ("tests.examples.plain_env:not_a_class", "is a function, not a class"),
            ("tests.examples.plain_env", "must be module.path:Name"),
            ("tests.examples.plain_env:STOP", "is a list, not a class"),
        ]
        for target, expected in cases:
            with self.assertRaises(loader.LoadError) as caught:
                loader.load_environment(target)
            self.assertIn(expected, str(caught.exception))

    def test_constructor_error(self):
        with self.assertRaises(loader.LoadError) as caught:
            loader.load_environment("tests.examples.plain_env:BrokenInit")
        self.assertIn("BrokenInit({}) failed: RuntimeError: no board today", str(caught.exception))
        self.assertIn("plain_env.py", caught.exception.details)


@unittest.skipUnless(HAS_TORCH, "torch is not installed")
class Tensors(BridgeCase):
    def test_tensor_return(self):
        body = self.start("tests.examples.torch_env:TensorGame").call(
            "/step", {"message_log_batch": message_logs("a", "b"), "metadata": [None, None]})[2]
        self.assertEqual(body["rewards"], [0.0, 0.5])
        self.assertEqual(body["terminateds"], [False, True])
        self.assertEqual(body["metadata"][0], {"scores": [1, 2, 3], "best": 2.5, "pair": [1, "a"]})

    def test_float_terminateds_and_tensor_components(self):
        body = self.start("tests.examples.torch_env:FloatTerminateds").call(
            "/step", {"message_log_batch": message_logs("a", "b"), "metadata": [None, None]})[2]
        self.assertEqual(body["terminateds"], [False, True])
        self.assertEqual(body["rewards"], {"format": [1.0, 1.0], "correct": [0.0, 1.0]})

    def test_2d_rewards(self):
        status, _, body = self.start("tests.examples.torch_env:MatrixRewards").call(
            "/step", {"message_log_batch": message_logs("a"), "metadata": [None]})
        self.assertEqual(status, 500)
        self.assertIn("MatrixRewards.step returned", body["error"])
        self.assertIn("rewards is a 2-D tensor (shape [1, 2])", body["error"])
        self.assertIn("dict of named components", body["error"])


class PostProcess(BridgeCase):
    BATCH = {"total_reward": [1.0, 0.0, 0.5], "done": [True, False, True], "names": ["a", "b", "c"],
             "message_log": [[{"role": "user", "content": "x", "token_ids": [1, 2, 3]}], [], []]}

    def test_metrics(self):
        status, _, body = self.start("tests.examples.post_process_env:WithMetrics").call(
            "/post_process", {"batch": self.BATCH})
        self.assertEqual(status, 200, body)
        metrics = body["metrics"]
        self.assertAlmostEqual(metrics["mean_reward"], 0.5)
        self.assertEqual(metrics["count"], 3)
        self.assertEqual(metrics["flag"], 1)
        self.assertEqual(metrics["names_stay_list"], 1.0)
        self.assertEqual(metrics["got_tensor"], 1.0 if HAS_TORCH else 0.0)
        self.assertEqual(metrics["reward_float32"], 1.0 if HAS_TORCH else 0.0)
        self.assertEqual(metrics["done_bool"], 1.0 if HAS_TORCH else 0.0)
        self.assertEqual(metrics["tokens_int64"], 1.0 if HAS_TORCH else 0.0)
        if HAS_TORCH:
            self.assertEqual(metrics["max_reward"], 1.0)

    def test_errors(self):
        status, _, body = self.start("tests.examples.plain_env:EchoGame").call("/post_process", {"batch": {}})
        self.assertEqual((status, body["error"]), (404, "EchoGame has no global_post_process_and_metrics"))
        running = self.start("tests.examples.post_process_env:BadMetrics")
        status, _, body = running.call("/post_process", {"batch": {"total_reward": [1]}})
        self.assertEqual(status, 500)
        self.assertIn('metrics["text"]', body["error"])
        self.assertIn("BadMetrics.global_post_process_and_metrics returned", body["error"])
        status, _, body = running.call("/post_process", {"batch": [1]})
        self.assertEqual(status, 400)
        status, _, body = running.call("/post_process", {"batch": {"a": [1], "b": [1, 2]}})
        self.assertEqual(status, 400)
        self.assertIn("different lengths", body["error"])


class Dataset(BridgeCase):
    REQUEST = {"task_name": "guess", "size": 3, "seed": 4, "config": {"max_number": 5}}

    def test_dataset(self):
        running = self.start("tests.examples.plain_env:EchoGame", dataset="tests.examples.datasets:make_dataset")
        status, _, body = running.call("/dataset", self.REQUEST)
        self.assertEqual(status, 200, body)
        data = body["data"]
        self.assertEqual(len(data), 3)
        self.assertEqual([d["task_name"] for d in data], ["guess"] * 3)
        self.assertEqual([d["stop_strings"] for d in data], [None] * 3)
        self.assertEqual(data[1]["extra_env_info"], {"i": 1, "pair": [1, 1]})
        self.assertEqual(running.call("/dataset", self.REQUEST)[2], body)  # same seed, same data

    def test_keyword_filtering(self):
        body = self.start("tests.examples.plain_env:EchoGame", dataset="tests.examples.datasets:make_dataset_any").call(
            "/dataset", self.REQUEST)[2]
        self.assertEqual(body["data"], [{"task_name": "own", "message_log": [], "stop_strings": ["x"],
                                         "extra_env_info": {"kwargs": ["config", "seed", "size", "task_name"]}}])
        body = self.start("tests.examples.plain_env:EchoGame", dataset="tests.examples.datasets:make_dataset_task").call(
            "/dataset", self.REQUEST)[2]
        self.assertEqual([d["extra_env_info"]["seen_task"] for d in body["data"]], ["guess"] * 3)

    def test_task_name_defaults_to_the_bridge(self):
        body = self.start("tests.examples.plain_env:EchoGame", dataset="tests.examples.datasets:make_dataset").call(
            "/dataset", {"size": 1, "seed": 0, "config": None})[2]
        self.assertEqual(body["data"][0]["task_name"], "echo_game")

    def test_errors(self):
        status, _, body = self.start("tests.examples.plain_env:EchoGame").call("/dataset", self.REQUEST)
        self.assertEqual(status, 404)
        self.assertEqual(body["error"], "this bridge was started without --dataset: give the scenario's samples, "
                                        "or restart with --dataset module:function")
        status, _, body = self.start("tests.examples.plain_env:EchoGame",
                                     dataset="tests.examples.datasets:make_dataset_not_list").call("/dataset",
                                                                                                  self.REQUEST)
        self.assertEqual(status, 500)
        self.assertIn("make_dataset_not_list", body["error"])
        self.assertIn("returned {'size': 3} (dict)", body["error"])
        running = self.start("tests.examples.plain_env:EchoGame", dataset="tests.examples.datasets:make_dataset_raises")
        status, _, body = running.call("/dataset", self.REQUEST)
        self.assertEqual(status, 500)
        self.assertEqual(body["error"], "KeyError: 'no such split'")
        self.assertIn("datasets.py", body["traceback"])
        status, _, body = running.call("/dataset", dict(self.REQUEST, size=-1))
        self.assertEqual(status, 400)
        self.assertIn("size is -1", body["error"])


class Shaped:
    """Shaped like a Ray actor's user class.

    Second paragraph."""

    def __init__(self, cfg):
        self.cfg = cfg

    def step(self, message_log_batch, metadata):
        n = len(metadata)
        return ([{"role": "environment", "content": str(self.cfg)}] * n, metadata, None, [2.0] * n, [True] * n)


class RayShapedActorClass:
    """What real Ray's ray.remote(Shaped) looks like to the bridge: ``remote``, ``__ray_metadata__`` whose
    ``modified_class`` is Ray's subclass of Shaped (same name, ``__ray_actor_class__``), a direct call TypeError."""

    def __init__(self):
        class Modified(Shaped):
            __ray_actor_class__ = Shaped

            def __ray_ready__(self):
                return True

        Modified.__name__ = "Shaped"
        self.__ray_metadata__ = type("Meta", (), {"modified_class": Modified})()

    def __call__(self, *args, **kwargs):
        raise TypeError("Actors cannot be instantiated directly.")

    def remote(self, *args):
        from rollout_lab_bridge import ray_standin
        instance = self.__ray_metadata__.modified_class(*args)

        class Handle:
            def __getattr__(self, name):
                method = getattr(instance, name)
                return type("Method", (), {"remote": staticmethod(lambda *a: ray_standin.put(method(*a)))})()

        return Handle()


@unittest.skipIf(HAS_RAY, "real Ray is installed")
class DuckTypedActorClass(unittest.TestCase):
    def test_detected_and_called_through_get(self):
        from rollout_lab_bridge import server
        value = RayShapedActorClass()
        self.assertTrue(loader.is_actor_class(value))
        self.assertFalse(loader.is_actor_class(Shaped))
        self.assertIs(loader.user_class(value), Shaped)
        environment = loader.Environment("somewhere:Shaped", value, {"k": 1}, True)
        bridge = server.Bridge(environment)
        info = bridge.info()
        self.assertEqual((info["title"], info["name"], info["description"], info["bridge"]["ray"]),
                         ("Shaped", "shaped", "Shaped like a Ray actor's user class.", "stand-in"))
        body = bridge.step({"message_log_batch": message_logs("a"), "metadata": [{"m": 1}]})
        self.assertEqual((body["observations"][0]["content"], body["rewards"], body["metadata"]),
                         ("{'k': 1}", [2.0], [{"m": 1}]))
