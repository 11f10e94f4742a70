"""The weights file of ``builtin:trained`` (src/policy/builtin-model/weights-file.ts): safetensors written and read
with the standard library. Hugging Face Llama's tensor names, PyTorch's ``[out, in]`` layout, float32 little-endian;
``__metadata__`` holds ``format``, ``config`` (the architecture, config.json's keys) and ``training`` (provenance).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import torch

from .model import BYTE_LEVEL, Architecture, Decoder, Vocabulary

FORMAT = "rollout-lab-llama-weights/1"


def hf_name(name: str) -> str:
    """The file's name of a Decoder parameter: ``layers.0.q_proj.weight`` -> ``model.layers.0.self_attn.q_proj.weight``."""
    if name.startswith("lm_head."):
        return name
    parts = name.split(".")
    if parts[0] == "layers":
        block = "self_attn" if parts[2] in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp" if parts[2].endswith("_proj") else None
        if block:
            parts.insert(2, block)
    return "model." + ".".join(parts)


def tensors_of(model: Decoder) -> dict[str, torch.Tensor]:
    out = {}
    for name, tensor in model.state_dict().items():
        # A tied LM head is the embedding: the file holds it once, as model.embed_tokens.weight.
        if name == "lm_head.weight" and model.architecture.tie_word_embeddings:
            continue
        out[hf_name(name)] = tensor.detach().to("cpu", torch.float32).contiguous()
    return out


def save(path: str | Path, model: Decoder, training: dict | None = None) -> None:
    tensors = tensors_of(model)
    metadata = {"format": FORMAT, "config": json.dumps(model.architecture.to_config())}
    if model.vocabulary.merges:  # the byte-pair merges its ids stand for (weights-file.ts reads "merges")
        metadata["vocabulary"] = json.dumps({"merges": model.vocabulary.merges, "allowed_ids": model.vocabulary.allowed_ids})
    if training is not None:
        metadata["training"] = json.dumps(training, sort_keys=True)
    header: dict = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, tensor in tensors.items():
        data = tensor.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the tensors start 8-byte aligned, as safetensors writers do
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    tmp.replace(path)


def load(path: str | Path) -> tuple[Decoder, dict]:
    """The decoder a weights file holds, and its metadata."""
    raw = Path(path).read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    metadata = header.pop("__metadata__", {})
    if metadata.get("format") != FORMAT:
        raise ValueError(f"{path}: __metadata__.format is {metadata.get('format')!r}, expected {FORMAT!r}")
    vocabulary = Vocabulary.from_record(json.loads(metadata["vocabulary"])) if "vocabulary" in metadata else BYTE_LEVEL
    model = Decoder(Architecture(**json.loads(metadata["config"])), vocabulary)
    wanted = {hf_name(n): n for n in model.state_dict() if not (n == "lm_head.weight" and model.architecture.tie_word_embeddings)}
    if set(header) != set(wanted):
        raise ValueError(f"{path}: tensors {sorted(set(header) ^ set(wanted))} do not match the architecture")
    state = {}
    data = memoryview(raw)[8 + length :]
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        values = torch.frombuffer(bytearray(data[start:end]), dtype=torch.float32).reshape(entry["shape"])
        state[wanted[name]] = values
    if model.architecture.tie_word_embeddings:
        state["lm_head.weight"] = state["embed_tokens.weight"]
    model.load_state_dict(state)
    return model, metadata
