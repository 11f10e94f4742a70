"""``python3 -m training.export_fixture [dir]``: writes the fixture of src/policy/builtin-model/trained-model.test.ts,
a weights file PyTorch exported (``torch-trained.safetensors``, a 1-layer decoder small enough to commit) and
PyTorch's logits for a short prompt at every position (``torch-trained.logits.json``). The TypeScript test builds
the file into the ONNX folder and holds onnxruntime's logits to these within 1e-4."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from . import weights_file
from .model import Architecture, Decoder

ARCHITECTURE = Architecture(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=512)
# "<|im_start|>user\nSlide!<|im_end|>\n<|im_start|>assistant\n<think>" in byte-level ids.
IDS = [257, *b"user\nSlide!", 258, 10, 257, *b"assistant\n", 261]


def fixture_model() -> Decoder:
    torch.manual_seed(21)
    model = Decoder(ARCHITECTURE)
    # Larger than the 0.02 initialisation, and norms away from 1, so a transposed or misnamed tensor shows.
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(0.5 + torch.rand_like(p) if p.dim() == 1 else torch.randn_like(p) * 0.5)
    return model


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else Path(__file__).resolve().parent.parent / "src/policy/builtin-model/fixtures")
    out.mkdir(parents=True, exist_ok=True)
    model = fixture_model()
    weights_file.save(out / "torch-trained.safetensors", model, {"fixture": "training/export_fixture.py", "seed": 21})
    with torch.no_grad():
        logits = model(torch.tensor([IDS]))[0]
    (out / "torch-trained.logits.json").write_text(json.dumps({"ids": IDS, "logits": [[round(v, 7) for v in row.tolist()] for row in logits]}) + "\n")
    print(f"wrote {out / 'torch-trained.safetensors'} and torch-trained.logits.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
