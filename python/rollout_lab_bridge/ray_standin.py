"""A stand-in for the ``ray`` module, NOT Ray: rollout_lab_bridge installs it as ``sys.modules["ray"]`` when
``import ray`` fails, so that an environment module doing ``import ray`` and ``@ray.remote`` imports and runs in
this one process, without a cluster.

It covers what environment code uses: ``ray.remote`` (bare, or with keyword options, on classes and functions),
actor classes (``.remote``, ``.options``; a direct call raises TypeError as Ray's does), actor handles whose
methods have ``.remote``, ``ray.get`` / ``ray.put`` / ``ray.wait``, ``ray.init`` / ``ray.is_initialized`` /
``ray.shutdown``, ``ray.method``, ``ray.actor.ActorClass`` and ``ray.exceptions``. What it keeps of Ray's
semantics:

- arguments are passed as copies (Ray pickles them; here ``copy.deepcopy``), and so are results;
- calls on one actor run one at a time, in the order they were made (each actor has one worker thread);
- an exception in an actor's method or a remote function is raised by ``ray.get``, not by ``.remote()``,
  wrapped in ``RayTaskError`` (which is also an instance of the original exception's class where it can be),
  with the original traceback's text kept in its message and in ``traceback_str``; the original is ``cause``.

Resource options (``num_cpus``, ``num_gpus``, ...) are accepted and ignored.
"""

import copy
import functools
import queue
import sys
import threading
import traceback
import types

__rollout_lab_standin__ = True
__version__ = "0.0.0-rollout-lab-bridge-stand-in"

_state = {"initialized": False}
_state_lock = threading.Lock()


# --------------------------------------------------------------------------- exceptions

class RayError(Exception):
    """Base of the stand-in's errors."""


class GetTimeoutError(RayError, TimeoutError):
    """``ray.get(..., timeout=...)`` ran out of time."""


class RayTaskError(RayError):
    """An exception raised by a remote function or an actor method, re-raised by ``ray.get``.

    ``cause`` is the original exception, ``traceback_str`` the text of its traceback."""

    def __init__(self, function_name, traceback_str, cause):
        self.function_name = function_name
        self.traceback_str = traceback_str
        self.cause = cause
        self._message = f"{function_name} raised {type(cause).__name__}: {cause}\n\n{traceback_str}".rstrip()
        Exception.__init__(self, self._message)

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (_rebuild_task_error, (self.function_name, self.traceback_str, self.cause))

    def as_instanceof_cause(self):
        """A copy that is also an instance of the cause's class (``except ValueError`` catches it), as Ray's."""
        cause_class = type(self.cause)
        if isinstance(self, cause_class):
            return self
        try:
            derived = type(f"RayTaskError({cause_class.__name__})", (RayTaskError, cause_class), {
                "__init__": RayTaskError.__init__,
                "__str__": RayTaskError.__str__,
                "__module__": __name__,
            })
            error = derived.__new__(derived)
            RayTaskError.__init__(error, self.function_name, self.traceback_str, self.cause)
            return error
        except Exception:  # a class that cannot be mixed in (instance lay-out conflicts, final classes)
            return self


def _rebuild_task_error(function_name, traceback_str, cause):
    return RayTaskError(function_name, traceback_str, cause)


class RayActorError(RayError):
    """The actor died: its constructor raised. ``cause`` is that exception, ``traceback_str`` its traceback."""

    def __init__(self, class_name, traceback_str, cause):
        self.class_name = class_name
        self.traceback_str = traceback_str
        self.cause = cause
        super().__init__(f"the actor {class_name} died: its constructor raised "
                         f"{type(cause).__name__}: {cause}\n\n{traceback_str}".rstrip())


def _task_error(function_name, error):
    """Wrap ``error`` (caught in the worker) with the text of its traceback, less the stand-in's own frame."""
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None
    text = "".join(traceback.format_exception(type(error), error, tb))
    return RayTaskError(function_name, text, error).as_instanceof_cause()


# --------------------------------------------------------------------------- object refs

_MISSING = object()


class ObjectRef:
    """The stand-in's future: filled in by a worker, read with ``ray.get``."""

    def __init__(self, label="value"):
        self._label = label
        self._done = threading.Event()
        self._value = _MISSING
        self._error = None

    def _set(self, value):
        self._value = value
        self._done.set()

    def _fail(self, error):
        self._error = error
        self._done.set()

    def _result(self, timeout):
        if not self._done.wait(timeout):
            raise GetTimeoutError(f"ray.get: {self._label} not ready within {timeout} s (stand-in ray)")
        if self._error is not None:
            raise self._error
        return copy.deepcopy(self._value)

    def ready(self):
        return self._done.is_set()

    def __repr__(self):
        state = "ready" if self._done.is_set() else "pending"
        return f"<ObjectRef of {self._label}, {state} (rollout_lab_bridge's stand-in ray, not Ray)>"


def _resolve(args, kwargs):
    """Copy the arguments as Ray's pickling would; top-level ObjectRefs are replaced by their values, as in Ray."""
    args = tuple(get(a) if isinstance(a, ObjectRef) else copy.deepcopy(a) for a in args)
    kwargs = {k: get(v) if isinstance(v, ObjectRef) else copy.deepcopy(v) for k, v in kwargs.items()}
    return args, kwargs


def _auto_init():
    with _state_lock:
        _state["initialized"] = True


# --------------------------------------------------------------------------- actors

class _Actor:
    """One actor: its instance and the worker thread that runs its calls one at a time, in order."""

    def __init__(self, cls, args, kwargs):
        self.cls = cls
        self.instance = None
        self.creation_error = None
        self.calls = queue.Queue()
        self.calls.put((self._construct, (args, kwargs), None))
        self.thread = threading.Thread(target=self._work, name=f"stand-in ray actor {cls.__name__}", daemon=True)
        self.thread.start()

    def _construct(self, args, kwargs):
        try:
            self.instance = self.cls(*args, **kwargs)
        except Exception as error:
            tb = error.__traceback__.tb_next if error.__traceback__ is not None else None
            text = "".join(traceback.format_exception(type(error), error, tb))
            self.creation_error = RayActorError(self.cls.__name__, text, error)

    def _work(self):
        while True:
            function, (args, kwargs), ref = self.calls.get()
            if function is None:
                return
            if ref is None:
                function(args, kwargs)
                continue
            if self.creation_error is not None:
                ref._fail(self.creation_error)
                continue
            try:
                ref._set(function(self.instance, *args, **kwargs))
            except Exception as error:
                ref._fail(_task_error(f"{self.cls.__name__}.{function.__name__}", error))

    def submit(self, name, args, kwargs):
        ref = ObjectRef(f"{self.cls.__name__}.{name}()")
        args, kwargs = _resolve(args, kwargs)
        if name == "__ray_ready__":
            function = _ray_ready
        elif name == "__ray_terminate__":
            function = _ray_terminate
        else:
            function = getattr(self.cls, name)
        self.calls.put((function, (args, kwargs), ref))
        return ref


def _ray_ready(instance):
    return True


def _ray_terminate(instance):
    return None


class ActorMethod:
    """``handle.method``: call it with ``.remote(*args, **kwargs)``, which returns an ObjectRef."""

    def __init__(self, actor, name):
        self._actor = actor
        self._name = name

    def remote(self, *args, **kwargs):
        return self._actor.submit(self._name, args, kwargs)

    def options(self, **options):
        return self

    def __call__(self, *args, **kwargs):
        raise TypeError(f"Actor methods cannot be called directly. Instead of running "
                        f"'object.{self._name}()', try 'object.{self._name}.remote()'.")

    def __repr__(self):
        return f"<ActorMethod {self._actor.cls.__name__}.{self._name} (rollout_lab_bridge's stand-in ray, not Ray)>"


class ActorHandle:
    """A handle to a stand-in actor: its methods are ``ActorMethod``s."""

    def __init__(self, actor):
        self._ray_actor = actor

    def __getattr__(self, name):
        actor = self.__dict__.get("_ray_actor")
        if actor is None:
            raise AttributeError(name)
        if name in ("__ray_ready__", "__ray_terminate__"):
            return ActorMethod(actor, name)
        if name.startswith("__") or not callable(getattr(actor.cls, name, None)):
            raise AttributeError(f"'ActorHandle' object for {actor.cls.__name__} has no method '{name}'")
        return ActorMethod(actor, name)

    def __repr__(self):
        return f"<ActorHandle of {self._ray_actor.cls.__name__} (rollout_lab_bridge's stand-in ray, not Ray)>"


class _ActorClassMetadata:
    def __init__(self, modified_class, options):
        self.modified_class = modified_class
        self.class_name = modified_class.__name__
        self.module_name = modified_class.__module__
        self.options = dict(options)

    def __repr__(self):
        return f"<actor class metadata of {self.class_name} (rollout_lab_bridge's stand-in ray, not Ray)>"


class ActorClass:
    """What ``ray.remote`` makes of a class: ``Cls.remote(*args, **kwargs)`` creates an actor and returns its
    handle; ``Cls.options(**kw).remote(...)`` the same with options. Calling ``Cls(...)`` raises TypeError."""

    def __init__(self, *args, **kwargs):
        raise TypeError("Actors cannot be instantiated directly. Use ray.remote(cls) and then cls.remote().")

    @classmethod
    def _make(cls, modified_class, options):
        namespace = {
            "__module__": modified_class.__module__,
            "__qualname__": getattr(modified_class, "__qualname__", modified_class.__name__),
            "__doc__": modified_class.__doc__,
        }
        try:  # as Ray's: the actor class also inherits the user's class, so its class attributes show through
            derived = type(modified_class.__name__, (ActorClass, modified_class), namespace)
            actor_class = object.__new__(derived)
        except TypeError:  # a metaclass conflict, abstract methods, slots: without the user's class
            derived = type(modified_class.__name__, (ActorClass,), namespace)
            actor_class = object.__new__(derived)
        actor_class.__ray_metadata__ = _ActorClassMetadata(modified_class, options)
        actor_class.__name__ = modified_class.__name__
        actor_class.__qualname__ = getattr(modified_class, "__qualname__", modified_class.__name__)
        actor_class.__module__ = modified_class.__module__
        actor_class.__doc__ = modified_class.__doc__
        return actor_class

    def __call__(self, *args, **kwargs):
        name = self.__ray_metadata__.class_name
        raise TypeError(f"Actors cannot be instantiated directly. Instead of '{name}()', use "
                        f"'{name}.remote()'. (rollout_lab_bridge's stand-in ray, not Ray)")

    def remote(self, *args, **kwargs):
        _auto_init()
        cls = self.__ray_metadata__.modified_class
        args, kwargs = _resolve(args, kwargs)
        return ActorHandle(_Actor(cls, args, kwargs))

    def options(self, **options):
        merged = dict(self.__ray_metadata__.options, **options)
        return ActorClass._make(self.__ray_metadata__.modified_class, merged)

    def __repr__(self):
        meta = self.__ray_metadata__
        return f"<actor class {meta.module_name}.{meta.class_name} (rollout_lab_bridge's stand-in ray, not Ray)>"


# --------------------------------------------------------------------------- remote functions

class RemoteFunction:
    """What ``ray.remote`` makes of a function: ``f.remote(*args, **kwargs)`` runs it in a thread of its own and
    returns an ObjectRef; calling ``f(...)`` directly raises TypeError, as in Ray."""

    def __init__(self, function, options):
        self._function = function
        self._options = dict(options)
        functools.update_wrapper(self, function)

    def remote(self, *args, **kwargs):
        _auto_init()
        name = getattr(self._function, "__qualname__", repr(self._function))
        ref = ObjectRef(f"{name}()")
        args, kwargs = _resolve(args, kwargs)

        def run():
            try:
                ref._set(self._function(*args, **kwargs))
            except Exception as error:
                ref._fail(_task_error(name, error))

        threading.Thread(target=run, name=f"stand-in ray task {name}", daemon=True).start()
        return ref

    def options(self, **options):
        return RemoteFunction(self._function, dict(self._options, **options))

    def __call__(self, *args, **kwargs):
        name = getattr(self._function, "__name__", "f")
        raise TypeError(f"Remote functions cannot be called directly. Instead of running '{name}()', "
                        f"try '{name}.remote()'. (rollout_lab_bridge's stand-in ray, not Ray)")

    def __repr__(self):
        return f"<remote function {self._function!r} (rollout_lab_bridge's stand-in ray, not Ray)>"


# --------------------------------------------------------------------------- the API

def _make_remote(target, options):
    if isinstance(target, type):
        return ActorClass._make(target, options)
    if callable(target):
        return RemoteFunction(target, options)
    raise TypeError(f"ray.remote: expected a class or a function, got {type(target).__name__}")


def remote(*args, **options):
    """``@ray.remote``, ``@ray.remote(num_cpus=1, ...)`` or ``ray.remote(cls)``."""
    if len(args) == 1 and not options and callable(args[0]):
        return _make_remote(args[0], {})
    if args:
        raise TypeError("ray.remote takes a class or a function, or only keyword options: @ray.remote(num_cpus=1)")
    return lambda target: _make_remote(target, options)


def method(*args, **options):
    """``@ray.method(num_returns=...)``: accepted; the stand-in ignores the options."""
    if len(args) == 1 and not options and callable(args[0]):
        return args[0]
    return lambda function: function


def get(refs, *, timeout=None):
    """The value of an ObjectRef, or a list of values for a list of them; an exception of the call is raised."""
    if isinstance(refs, ObjectRef):
        return refs._result(timeout)
    if isinstance(refs, (list, tuple)):
        for ref in refs:
            if not isinstance(ref, ObjectRef):
                raise TypeError(f"ray.get: expected ObjectRefs, got a {type(ref).__name__} in the list")
        return [ref._result(timeout) for ref in refs]
    raise TypeError(f"ray.get: expected an ObjectRef or a list of them, got {type(refs).__name__}")


def put(value):
    """An ObjectRef holding a copy of ``value``."""
    _auto_init()
    ref = ObjectRef("ray.put value")
    ref._set(copy.deepcopy(value))
    return ref


def wait(refs, *, num_returns=1, timeout=None, fetch_local=True):
    """``(ready, not_ready)``: waits until ``num_returns`` of ``refs`` are ready or ``timeout`` passes."""
    refs = list(refs)
    if num_returns > len(refs):
        raise ValueError("num_returns cannot be greater than the number of objects given to ray.wait")
    done = threading.Event()
    remaining = [num_returns]
    lock = threading.Lock()

    def watch(ref):
        ref._done.wait()
        with lock:
            remaining[0] -= 1
            if remaining[0] <= 0:
                done.set()

    if num_returns == 0:
        done.set()
    for ref in refs:
        threading.Thread(target=watch, args=(ref,), daemon=True).start()
    done.wait(timeout)
    ready = [r for r in refs if r.ready()][:num_returns]
    return ready, [r for r in refs if r not in ready]


def init(*args, **kwargs):
    """Marks the stand-in initialized; every option (``address``, ``num_cpus``, ...) is accepted and ignored."""
    with _state_lock:
        if _state["initialized"] and not kwargs.get("ignore_reinit_error", False):
            raise RuntimeError("Maybe you called ray.init twice by accident? (stand-in ray, not Ray) "
                               "Pass ignore_reinit_error=True to allow it.")
        _state["initialized"] = True
    return None


def is_initialized():
    return _state["initialized"]


def shutdown(*args, **kwargs):
    with _state_lock:
        _state["initialized"] = False


def kill(actor, *, no_restart=True):
    """Stops a stand-in actor's worker after the calls already made."""
    actor._ray_actor.calls.put((None, ((), {}), None))


# --------------------------------------------------------------------------- ray.actor, ray.exceptions

actor = types.ModuleType("ray.actor", "The stand-in's ray.actor (rollout_lab_bridge), not Ray's.")
actor.ActorClass = ActorClass
actor.ActorHandle = ActorHandle
actor.ActorMethod = ActorMethod

exceptions = types.ModuleType("ray.exceptions", "The stand-in's ray.exceptions (rollout_lab_bridge), not Ray's.")
exceptions.RayError = RayError
exceptions.RayTaskError = RayTaskError
exceptions.RayActorError = RayActorError
exceptions.GetTimeoutError = GetTimeoutError

for _submodule in (actor, exceptions):
    _submodule.__rollout_lab_standin__ = True
    _submodule.__package__ = "ray"


class _StandinModule(types.ModuleType):
    def __repr__(self):
        return f"<module '{self.__name__}': rollout_lab_bridge's stand-in for Ray, not Ray>"


sys.modules[__name__].__class__ = _StandinModule
actor.__class__ = _StandinModule
exceptions.__class__ = _StandinModule


def install():
    """Make ``import ray`` (and ``ray.actor``, ``ray.exceptions``) give this stand-in. Returns the module."""
    module = sys.modules[__name__]
    sys.modules["ray"] = module
    sys.modules["ray.actor"] = actor
    sys.modules["ray.exceptions"] = exceptions
    return module
