"""The stand-in ray module: actor classes, copies, order, errors raised by get, remote functions."""

import threading
import time
import unittest

from rollout_lab_bridge import ray_standin as ray


class Board:
    """A board actor."""

    def __init__(self, start=0):
        self.items = []
        self.start = start
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def add(self, item):
        item.append("seen by the actor")  # a copy: the caller's list is not changed
        self.items.append(item)
        return self.items

    def slow(self, i, delay):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        time.sleep(delay)
        with self.lock:
            self.active -= 1
        self.items.append(i)
        return i

    def stats(self):
        return {"items": self.items, "max_active": self.max_active, "start": self.start}

    def explode(self, why):
        raise ValueError(f"exploded: {why}")


class StandIn(unittest.TestCase):
    def test_it_says_it_is_a_stand_in(self):
        self.assertIn("stand-in", ray.__doc__.splitlines()[0])
        self.assertIn("NOT Ray", ray.__doc__)
        self.assertIn("stand-in", repr(ray))
        self.assertIn("not Ray", repr(ray))
        self.assertIn("stand-in", repr(ray.remote(Board)))

    def test_actor_class_shapes(self):
        for Actor in (ray.remote(Board), ray.remote(num_cpus=1)(Board)):
            self.assertIsInstance(Actor, ray.actor.ActorClass)
            self.assertIs(Actor.__ray_metadata__.modified_class, Board)
            self.assertEqual(Actor.__name__, "Board")
            self.assertTrue(callable(Actor.remote))
            self.assertTrue(callable(Actor.add))  # class attributes show through, as in Ray
            self.assertTrue(callable(Actor.options(num_gpus=0).remote))
            with self.assertRaisesRegex(TypeError, r"Actors cannot be instantiated directly.*Board\.remote\(\)"):
                Actor()

    def test_decorator_forms(self):
        @ray.remote
        class A:
            def f(self):
                return "a"

        @ray.remote(num_cpus=2, max_restarts=0)
        class B:
            def f(self):
                return "b"

        self.assertEqual(ray.get(A.remote().f.remote()), "a")
        self.assertEqual(ray.get(B.options(name="b").remote().f.remote()), "b")

    def test_arguments_and_results_are_copies(self):
        handle = ray.remote(Board).remote()
        mine = ["mine"]
        items = ray.get(handle.add.remote(mine))
        self.assertEqual(mine, ["mine"])
        self.assertEqual(items, [["mine", "seen by the actor"]])
        items.append("changed by the caller")
        self.assertEqual(ray.get(handle.stats.remote())["items"], [["mine", "seen by the actor"]])

    def test_constructor_arguments(self):
        handle = ray.remote(Board).remote(start=5)
        self.assertEqual(ray.get(handle.stats.remote())["start"], 5)
        self.assertTrue(ray.get(handle.__ray_ready__.remote()))

    def test_calls_run_one_at_a_time_in_order(self):
        handle = ray.remote(Board).remote()
        refs = [handle.slow.remote(i, 0.01 * (5 - i)) for i in range(5)]
        self.assertEqual(ray.get(refs), [0, 1, 2, 3, 4])
        stats = ray.get(handle.stats.remote())
        self.assertEqual(stats["items"], [0, 1, 2, 3, 4])
        self.assertEqual(stats["max_active"], 1)

    def test_error_raised_by_get_not_remote(self):
        handle = ray.remote(Board).remote()
        ref = handle.explode.remote("now")  # does not raise
        with self.assertRaises(ray.exceptions.RayTaskError) as caught:
            ray.get(ref)
        error = caught.exception
        self.assertIsInstance(error, ValueError)  # as Ray's as_instanceof_cause
        self.assertIsInstance(error.cause, ValueError)
        self.assertEqual(str(error.cause), "exploded: now")
        self.assertIn("test_ray_standin.py", error.traceback_str)
        self.assertIn("in explode", error.traceback_str)
        self.assertIn("ValueError: exploded: now", str(error))
        # the actor lives on
        self.assertEqual(ray.get(handle.stats.remote())["items"], [])

    def test_constructor_error(self):
        class Broken:
            def __init__(self):
                raise RuntimeError("no")

            def f(self):
                return 1

        handle = ray.remote(Broken).remote()  # does not raise
        with self.assertRaises(ray.exceptions.RayActorError) as caught:
            ray.get(handle.f.remote())
        self.assertIn("RuntimeError: no", str(caught.exception))

    def test_methods(self):
        handle = ray.remote(Board).remote()
        with self.assertRaisesRegex(TypeError, r"try 'object\.stats\.remote\(\)'"):
            handle.stats()
        with self.assertRaises(AttributeError):
            handle.no_such_method

    def test_remote_functions_put_wait(self):
        @ray.remote
        def double(x):
            x.append(1)
            return x * 2

        @ray.remote(num_returns=1)
        def fail():
            raise KeyError("k")

        given = [0]
        self.assertEqual(ray.get(double.remote(given)), [0, 1, 0, 1])
        self.assertEqual(given, [0])
        self.assertEqual(ray.get([double.remote([2]), double.remote(ray.put([3]))]), [[2, 1, 2, 1], [3, 1, 3, 1]])
        with self.assertRaises(KeyError):
            ray.get(fail.remote())
        with self.assertRaises(TypeError):
            double([1])
        ready, pending = ray.wait([double.remote([1])], num_returns=1, timeout=30)
        self.assertEqual((len(ready), len(pending)), (1, 0))

    def test_get_timeout(self):
        handle = ray.remote(Board).remote()
        ref = handle.slow.remote(0, 0.5)
        with self.assertRaises(ray.exceptions.GetTimeoutError):
            ray.get(ref, timeout=0.01)
        self.assertEqual(ray.get(ref), 0)

    def test_init(self):
        ray.init(ignore_reinit_error=True)
        self.assertTrue(ray.is_initialized())
        ray.init(ignore_reinit_error=True, num_cpus=4)
        ray.shutdown()
        self.assertFalse(ray.is_initialized())
        ray.init()
        self.assertTrue(ray.is_initialized())
