"""Conversions between the lab's JSON and what NeMo-RL-style environments take and give.

Out (to JSON): an ``EnvironmentReturn`` (NamedTuple, dataclass, dict or plain tuple in field order), metadata,
dataset entries and metrics, with tensors (anything with ``.tolist()``: torch, numpy) made lists and numbers,
checked on the way: every error is a ``ConversionError`` naming the path of the value (``rewards[1]``,
``metadata[2].board``).

In (from JSON): the batch of ``/post_process``, its number and boolean columns made tensors when torch is there.
"""

import dataclasses
import json
import math
import re

FIELDS = ("observations", "metadata", "next_stop_strings", "rewards", "terminateds", "answers")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ConversionError(ValueError):
    """A value that cannot be sent as JSON (or has the wrong shape); ``path`` names where it is."""

    def __init__(self, path, problem):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}{problem}")


def key_path(path, key):
    """``path.key``, or ``path["odd key"]`` for a key that is not an identifier."""
    if isinstance(key, str) and _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    shown = json.dumps(key) if isinstance(key, str) else repr(key)
    return f"{path}[{shown}]"


def _describe(value):
    try:
        text = repr(value)
    except Exception:
        text = "?"
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _check_finite(value, path):
    if not math.isfinite(value):
        raise ConversionError(path, f" is {value!r}, not a finite number")
    return value


def is_tensor(value):
    """Anything with ``.tolist()`` (torch tensors, numpy arrays and scalars) that is not a plain Python value."""
    return (not isinstance(value, (list, tuple, dict, str, bytes, int, float, type(None)))
            and callable(getattr(value, "tolist", None)))


def tensor_dims(value):
    """The number of dimensions of a tensor (``ndim`` / ``dim()``), or None."""
    ndim = getattr(value, "ndim", None)
    if isinstance(ndim, int):
        return ndim
    dim = getattr(value, "dim", None)
    if callable(dim):
        try:
            return int(dim())
        except Exception:
            return None
    return None


MAX_SAFE_INTEGER = 2**53 - 1


def to_json(value, path, depth=0):
    """``value`` as plain JSON data (dict with str keys, list, str, finite number, bool, None).

    Tuples become lists, tensors lists (0-d tensors and numpy scalars numbers)."""
    if depth > 100:
        raise ConversionError(path, ": nested deeper than 100 levels")
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            # JavaScript reads every JSON number as a double: a larger integer would come back changed.
            raise ConversionError(path, f" is {int(value)}, beyond the integers a JSON number carries exactly to "
                                        "JavaScript (up to 2**53 - 1 either way): send it as a string")
        return int(value)
    if isinstance(value, float):
        return _check_finite(float(value), path)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConversionError(path or "the value",
                                      f" has the key {_describe(key)}: keys of a JSON object must be strings")
            out[str(key)] = to_json(item, key_path(path, key), depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    if is_tensor(value):
        try:
            plain = value.tolist()
        except Exception as error:
            raise ConversionError(path, f": {type(value).__name__}.tolist() failed: {error}") from None
        if is_tensor(plain):
            raise ConversionError(path, f": cannot send an object of type {type(value).__name__} as JSON")
        return to_json(plain, path, depth)
    raise ConversionError(path, f": cannot send an object of type {type(value).__name__} as JSON")


def _plain_sequence(value, path):
    """A list from a list, tuple or tensor, or a ConversionError."""
    if is_tensor(value):
        if tensor_dims(value) == 0:
            raise ConversionError(path, " is a 0-d tensor: expected one value per sample")
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ConversionError(path, f" is {_describe(value)}: expected a list (one value per sample)")
    return list(value)


def _reward_list(value, path):
    if is_tensor(value) and tensor_dims(value) is not None and tensor_dims(value) >= 2:
        shape = getattr(value, "shape", None)
        shape_text = f" (shape {list(shape)})" if shape is not None else ""
        raise ConversionError(path, f" is a {tensor_dims(value)}-D tensor{shape_text}: give a 1-D tensor (one reward "
                                    "per sample), or a dict of named components ({name: 1-D tensor}) for several")
    rewards = []
    for i, item in enumerate(_plain_sequence(value, path)):
        item_path = f"{path}[{i}]"
        if is_tensor(item):
            item = item.tolist()
        if isinstance(item, (list, tuple)):
            raise ConversionError(item_path, " is a list: a sample's reward is a number; give a dict of named "
                                             "components ({name: [one number per sample]}) for several")
        if not isinstance(item, (int, float)):
            raise ConversionError(item_path, f" is {_describe(item)}, not a number")
        rewards.append(_check_finite(float(item), item_path))
    return rewards


def rewards_to_json(value, path="rewards"):
    """A list of floats, or ``{name: [floats]}`` for named components."""
    if isinstance(value, dict):
        if not value:
            raise ConversionError(path, " is an empty dict: give at least one named component")
        out = {}
        for name, component in value.items():
            if not isinstance(name, str):
                raise ConversionError(path, f" has the key {_describe(name)}: component names must be strings")
            out[name] = _reward_list(component, key_path(path, name))
        return out
    return _reward_list(value, path)


def terminateds_to_json(value, path="terminateds"):
    """A list of booleans from booleans, or 0/1 numbers, or a bool / number tensor."""
    out = []
    for i, item in enumerate(_plain_sequence(value, path)):
        item_path = f"{path}[{i}]"
        if is_tensor(item):
            item = item.tolist()
        if isinstance(item, bool):
            out.append(item)
        elif isinstance(item, (int, float)) and item in (0, 1):
            out.append(bool(item))
        else:
            raise ConversionError(item_path, f" is {_describe(item)}: expected a boolean (or 0 / 1)")
    return out


def answers_to_json(value, path="answers"):
    if value is None:
        return None
    out = []
    for i, item in enumerate(_plain_sequence(value, path)):
        if item is not None and not isinstance(item, str):
            raise ConversionError(f"{path}[{i}]", f" is {_describe(item)}: expected a string or None")
        out.append(item if item is None else str(item))
    return out


def stop_strings_to_json(value, path="next_stop_strings"):
    if value is None:
        return None
    out = []
    for i, item in enumerate(_plain_sequence(value, path)):
        item_path = f"{path}[{i}]"
        if item is None:
            out.append(None)
            continue
        strings = _plain_sequence(item, item_path)
        for j, s in enumerate(strings):
            if not isinstance(s, str):
                raise ConversionError(f"{item_path}[{j}]", f" is {_describe(s)}: expected a string")
        out.append([str(s) for s in strings])
    return out


def return_fields(result):
    """The fields of an EnvironmentReturn as a dict: from a NamedTuple, dataclass, dict, 5/6-tuple or an object
    with the fields as attributes. ``answers`` may be missing (None)."""
    if isinstance(result, dict):
        fields = dict(result)
        where = "the dict"
    elif isinstance(result, tuple) and hasattr(result, "_fields"):
        fields = dict(zip(result._fields, result))
        where = f"the {type(result).__name__}"
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
        where = f"the {type(result).__name__}"
    elif isinstance(result, (tuple, list)):
        if len(result) not in (5, 6):
            raise ConversionError("the answer", f" is a {type(result).__name__} of {len(result)} values: expected "
                                                f"the 6 fields of an EnvironmentReturn ({', '.join(FIELDS)})")
        fields = dict(zip(FIELDS, result))
        where = f"the {type(result).__name__}"
    elif all(hasattr(result, name) for name in FIELDS[:5]):
        fields = {name: getattr(result, name) for name in FIELDS if hasattr(result, name)}
        where = f"the {type(result).__name__}"
    else:
        raise ConversionError("the answer", f" is {_describe(result)}: expected an EnvironmentReturn (a NamedTuple, "
                                            f"dataclass, dict or tuple of {', '.join(FIELDS)})")
    unknown = [k for k in fields if k not in FIELDS]
    if unknown:
        raise ConversionError("the answer", f": {where} has the field {unknown[0]!r}, not one of an "
                                            f"EnvironmentReturn's ({', '.join(FIELDS)})")
    missing = [k for k in FIELDS[:5] if k not in fields]
    if missing:
        raise ConversionError("the answer", f": {where} has no field {missing[0]!r} (an EnvironmentReturn has "
                                            f"{', '.join(FIELDS)})")
    fields.setdefault("answers", None)
    return fields


def environment_return_to_json(result):
    """The JSON of ``/step``'s answer from what ``step`` returned."""
    fields = return_fields(result)
    observations = _plain_sequence(fields["observations"], "observations")
    metadata = _plain_sequence(fields["metadata"], "metadata")
    return {
        "observations": [to_json(o, f"observations[{i}]") for i, o in enumerate(observations)],
        "metadata": [to_json(m, f"metadata[{i}]") for i, m in enumerate(metadata)],
        "next_stop_strings": stop_strings_to_json(fields["next_stop_strings"]),
        "rewards": rewards_to_json(fields["rewards"]),
        "terminateds": terminateds_to_json(fields["terminateds"]),
        "answers": answers_to_json(fields["answers"]),
    }


def metrics_to_json(metrics, path="metrics"):
    """``{name: number}`` from a dict of tensors (``.item()``), ints, floats and bools (as 1 / 0)."""
    if not isinstance(metrics, dict):
        raise ConversionError(path, f" is {_describe(metrics)}: expected a dict of {{name: number}}")
    out = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise ConversionError(path, f" has the key {_describe(name)}: metric names must be strings")
        item_path = f"{path}[{json.dumps(name)}]"
        if is_tensor(value) or (not isinstance(value, (int, float)) and callable(getattr(value, "item", None))):
            try:
                value = value.item()
            except Exception as error:
                raise ConversionError(item_path, f" is {_describe(value)}: .item() failed ({error}); "
                                                 "a metric must be a number or a one-element tensor") from None
        if isinstance(value, bool):
            out[name] = int(value)
        elif isinstance(value, int):
            out[name] = int(value)
        elif isinstance(value, float):
            out[name] = _check_finite(float(value), item_path)
        else:
            raise ConversionError(item_path, f" is {_describe(value)}: a metric must be a number")
    return out


def dumps(value):
    """The JSON text of plain data; NaN and infinities refused (the last guard: ``allow_nan=False``).

    ASCII with escapes: a lone surrogate (text the lab sent, echoed back) has no UTF-8 form, but a JSON escape."""
    return json.dumps(value, allow_nan=False, ensure_ascii=True)


# --------------------------------------------------------------------------- in: the batch of /post_process

def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def batch_from_json(columns, torch=None, batch_class=None):
    """The batch given to ``global_post_process_and_metrics``: a ``batch_class`` (nemo_rl's BatchedDataDict) or
    a dict of columns. With ``torch``: all-number columns become float32 tensors, all-boolean columns bool
    tensors, and every ``message_log`` message's ``token_ids`` an int64 tensor; other columns stay lists."""
    out = {}
    for name, values in columns.items():
        if torch is not None and values and all(_is_number(v) for v in values):
            out[name] = torch.tensor([float(v) for v in values], dtype=torch.float32)
        elif torch is not None and values and all(isinstance(v, bool) for v in values):
            out[name] = torch.tensor(values, dtype=torch.bool)
        elif torch is not None and name == "message_log":
            out[name] = [_log_with_tensors(log, torch) for log in values]
        else:
            out[name] = values
    return batch_class(out) if batch_class is not None else out


def _log_with_tensors(log, torch):
    if not isinstance(log, list):
        return log
    messages = []
    for message in log:
        if isinstance(message, dict) and isinstance(message.get("token_ids"), list):
            message = dict(message, token_ids=torch.tensor(message["token_ids"], dtype=torch.int64))
        messages.append(message)
    return messages
