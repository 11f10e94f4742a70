"""Loading the environment: importing ``module.path:ClassName``, telling Ray actor classes from plain ones,
creating the instance (or actor) and calling its methods.

Ray: when ``import ray`` fails, the stand-in (``ray_standin``) is installed as ``sys.modules["ray"]`` before any
of the user's modules is imported, so ``import ray`` / ``@ray.remote`` in them work in this process.
"""

import copy
import importlib
import inspect
import re
import sys
import threading
import traceback

from . import ray_standin


class LoadError(Exception):
    """TARGET (or --dataset) cannot be loaded, or the environment cannot be created: the message says why;
    ``details`` is the traceback text where there is one."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.details = details


class UserCodeError(Exception):
    """The user's code raised: ``error`` is ``"<ExceptionType>: <message>"``, ``traceback_text`` the full
    traceback."""

    def __init__(self, error, traceback_text):
        super().__init__(error)
        self.error = error
        self.traceback_text = traceback_text


class Abandoned(Exception):
    """The caller stopped waiting (the lab closed the connection at its deadline) before the call's turn came."""


def ray_module():
    """``(ray, kind)``: the real ``ray`` with kind ``"ray"``, or the stand-in (installed now if needed) with kind
    ``"stand-in"``."""
    try:
        import ray
    except ImportError:
        return ray_standin.install(), "stand-in"
    if getattr(ray, "__rollout_lab_standin__", False):
        return ray, "stand-in"
    return ray, "ray"


def torch_module():
    """``torch`` when it can be imported, else None."""
    try:
        import torch
    except Exception:
        return None
    return torch


def batch_class():
    """nemo_rl's ``BatchedDataDict`` when nemo_rl can be imported, else None."""
    try:
        from nemo_rl.distributed.batched_data_dict import BatchedDataDict
    except Exception:
        return None
    return BatchedDataDict


def parse_target(text, what="TARGET"):
    """``(module, attribute)`` from ``module.path:Name``."""
    module, sep, attribute = text.rpartition(":")
    if not sep or not module or not attribute or not all(part.isidentifier() for part in attribute.split(".")) \
            or not all(part.isidentifier() for part in module.split(".")):
        raise LoadError(f"{what} must be module.path:Name (e.g. my_pkg.envs:MyEnv), got {text!r}")
    return module, attribute


def import_target(text, what="TARGET"):
    """The object ``module.path:Name`` names; a LoadError saying what was wrong."""
    module_name, attribute = parse_target(text, what)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        parts = module_name.split(".")
        prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if error.name in prefixes:
            raise LoadError(f"{what} {text}: no module named {error.name!r} (looked in the current directory "
                            f"and sys.path)") from None
        raise LoadError(f"{what} {text}: importing {module_name} failed: {type(error).__name__}: {error}",
                        traceback.format_exc()) from None
    except Exception as error:
        raise LoadError(f"{what} {text}: importing {module_name} raised {type(error).__name__}: {error}",
                        traceback.format_exc()) from None
    value = module
    where = module_name
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise LoadError(f"{what} {text}: {where} has no attribute {part!r}")
        value = getattr(value, part)
        where = f"{where}.{part}"
    return value


def is_actor_class(value, ray=None):
    """What ``ray.remote(cls)`` returns: has ``remote`` and ``__ray_metadata__`` (or is a ray.actor.ActorClass)."""
    if isinstance(value, type):
        return False
    if callable(getattr(value, "remote", None)) and hasattr(value, "__ray_metadata__"):
        return True
    actor = getattr(ray, "actor", None) if ray is not None else None
    actor_class = getattr(actor, "ActorClass", None)
    return isinstance(actor_class, type) and isinstance(value, actor_class)


def user_class(value):
    """The user's class: ``value`` itself, or an actor class's ``__ray_metadata__.modified_class`` (Ray's own
    subclass of it with the same name is looked through)."""
    if isinstance(value, type):
        return value
    cls = getattr(getattr(value, "__ray_metadata__", None), "modified_class", None)
    if not isinstance(cls, type):
        return None
    original = cls.__dict__.get("__ray_actor_class__")  # Ray's modified class names the user's
    if isinstance(original, type):
        return original
    bases = cls.__bases__
    if "__doc__" not in cls.__dict__ or cls.__dict__["__doc__"] is None:
        if len(bases) == 1 and bases[0].__name__ == cls.__name__:
            return bases[0]
    return cls


def constructor_args(cls, config, have_config):
    """``(config,)`` with --config; else ``()`` when the constructor accepts no arguments, else ``({},)``."""
    if have_config:
        return (config,)
    try:
        inspect.signature(cls).bind()
        return ()
    except TypeError:
        return ({},)
    except ValueError:  # no signature to be had
        return ({},)


def snake_case(name):
    """``MathEnvironment`` -> ``math_environment``, ``HTTPGame`` -> ``http_game``, ``Game2D`` -> ``game2d``."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return text.lower()


def first_paragraph(doc):
    if not doc:
        return ""
    paragraph = inspect.cleandoc(doc).strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines()).strip()


def describe_exception(error):
    """``("<Type>: <message>", traceback text)`` of an exception; a Ray task error is described by its cause, with
    the traceback text Ray kept."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and cause is not error:
        text = getattr(error, "traceback_str", None)
        if not isinstance(text, str) or not text:
            text = str(error)
        return f"{type(cause).__name__}: {cause}", text.rstrip() + "\n"
    return (f"{type(error).__name__}: {error}",
            "".join(traceback.format_exception(type(error), error, error.__traceback__)))


class Environment:
    """The environment being served: a plain instance or a Ray actor (real Ray or the stand-in).

    ``call(name, *args)`` calls a method, one call at a time (a lock), and raises UserCodeError for an
    exception in the user's code."""

    def __init__(self, target, value, config=None, have_config=False):
        self.target = target
        self.ray, ray_kind = ray_module()
        self.actor = is_actor_class(value, self.ray)
        self.ray_kind = ray_kind if self.actor else None
        self.cls = user_class(value)
        if self.cls is None:
            raise LoadError(f"TARGET {target} is {type(value).__name__}, not a class")
        self.name = self.cls.__name__
        self.lock = threading.Lock()
        args = constructor_args(self.cls, config, have_config)
        shown = f"{self.name}({'config' if args and have_config else '{}' if args else ''})"
        if self.actor:
            try:
                if not self.ray.is_initialized():
                    self.ray.init(ignore_reinit_error=True)
                self.handle = value.remote(*args)
                ready = getattr(self.handle, "__ray_ready__", None)
                if ready is not None and callable(getattr(ready, "remote", None)):
                    self.ray.get(ready.remote())
            except Exception as error:
                message, text = describe_exception(error)
                raise LoadError(f"creating the actor {shown.replace('(', '.remote(', 1)} failed: {message}",
                                text) from None
            self.instance = None
        else:
            try:
                self.instance = value(*copy.deepcopy(args))
            except Exception as error:
                message, text = describe_exception(error)
                raise LoadError(f"{shown} failed: {message}", text) from None
            self.handle = None

    def has_method(self, name):
        return callable(getattr(self.cls, name, None))

    def call(self, name, *args, wanted=None):
        """``instance.name(*copies of args)``, or ``ray.get(handle.name.remote(*args))``; calls run one at a time.

        ``wanted``: whether the caller still waits, asked once the call's turn comes; no: ``Abandoned``, and the
        call is not made (a step the lab gave up on would otherwise still run, and delay every later one)."""
        with self.lock:
            if wanted is not None and not wanted():
                raise Abandoned(name)
            try:
                if self.actor:
                    return self.ray.get(getattr(self.handle, name).remote(*args))
                return getattr(self.instance, name)(*copy.deepcopy(args))
            except Exception as error:
                raise UserCodeError(*describe_exception(error)) from None

    def runs_as(self):
        """The line saying how an actor class runs, or None for a plain class."""
        if not self.actor:
            return None
        if self.ray_kind == "ray":
            return f"{self.name} is a Ray actor class; Ray is installed: it runs as a Ray actor"
        return (f"{self.name} is a Ray actor class; Ray is not installed: it runs in this process through the "
                "bridge's stand-in ray module")


def load_environment(target, config=None, have_config=None):
    """Import TARGET (the stand-in ray installed first where Ray is missing) and create the environment."""
    if have_config is None:
        have_config = config is not None
    ray_module()
    value = import_target(target)
    ray, _ = ray_module()
    if not isinstance(value, type) and not is_actor_class(value, ray):
        kind = "a function" if inspect.isfunction(value) else "a module" if inspect.ismodule(value) \
            else f"a {type(value).__name__}"
        raise LoadError(f"TARGET {target} is {kind}, not a class (give the environment's class, e.g. "
                        "my_pkg.envs:MyEnv)")
    return Environment(target, value, config, have_config)


def load_dataset_function(target):
    """The function --dataset names."""
    ray_module()
    value = import_target(target, "--dataset")
    if not callable(value):
        raise LoadError(f"--dataset {target} is a {type(value).__name__}, not a function")
    return value


def dataset_arguments(function, available):
    """Those of ``available`` (size, seed, config, task_name) that ``function``'s signature accepts."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return dict(available)
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters):
        return dict(available)
    names = {p.name for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                       inspect.Parameter.KEYWORD_ONLY)}
    return {k: v for k, v in available.items() if k in names}
