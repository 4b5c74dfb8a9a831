"""The one loading path of the native weight files (csrc/model/safetensors.c mg_st_open, mg_st_load_weights): the
MAV model (MavEngine) and the chess policy network (PolicyNet) refuse a bad file with the same words, naming the
file, the tensor and the value (issue 48: one reader for both)."""
import json
import struct
from pathlib import Path

import pytest

from mavgame import _core

DATA = Path(__file__).resolve().parent.parent / "mavgame" / "data"

# kind: (shipped file, loader, metadata format, the noun of its messages, the noun of its tensors,
#        one of its 1-D tensors, one of its 2-D tensors)
KINDS = {
    "model": ("mav_connect_four.safetensors", lambda p: _core.MavEngine(str(p)), "mavgame-mav", "MAV model",
              "weights", "norm.weight", "embed.weight"),
    "policy": ("policy_chess.safetensors", lambda p: _core.PolicyNet(str(p)), "mavgame-policy", "policy network",
               "policy network weights", "stem.bias", "fc.weight"),
}


def _read(path):
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    data = raw[8 + n:]
    tensors = {k: [v["dtype"], list(v["shape"]), data[v["data_offsets"][0]:v["data_offsets"][1]]]
               for k, v in header.items()}
    return meta, tensors


def _write(path, meta, tensors):
    header, blobs, at = {"__metadata__": meta}, [], 0
    for name, (dtype, shape, blob) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return path


def _refusal(kind, tmp_path, mutate):
    fname, load = KINDS[kind][:2]
    meta, tensors = _read(DATA / fname)
    mutate(meta, tensors)
    path = _write(tmp_path / f"bad-{kind}.safetensors", meta, tensors)
    with pytest.raises(ValueError) as e:
        load(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: "), msg   # the file is named
    return msg[len(f"{path}: "):]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_shipped_files_load(kind):
    fname, load = KINDS[kind][:2]
    assert load(DATA / fname).n_params > 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_metadata_refusals_are_worded_alike(kind, tmp_path):
    _, _, fmt, noun, *_ = KINDS[kind]
    msg = _refusal(kind, tmp_path, lambda m, t: m.update(format="other"))
    assert msg == f"not a mavgame {noun} (metadata format 'other', '{fmt}' expected)"
    msg = _refusal(kind, tmp_path, lambda m, t: m.update(format_version="9"))
    assert msg == f"unsupported {noun} format version '9' (1 expected)"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_tensor_refusals_are_worded_alike(kind, tmp_path):
    _, _, _, _, weights, vec, mat = KINDS[kind]
    weight = weights[:-1]
    _, tensors = _read(DATA / KINDS[kind][0])
    n = tensors[vec][1][0]
    rows, cols = tensors[mat][1]

    def reshape(name, shape):
        return lambda m, t: t[name].__setitem__(1, shape)

    assert _refusal(kind, tmp_path, reshape(vec, [2, n // 2])) == \
        f"{weight} '{vec}' has shape (2, {n // 2}), config says ({n},)"
    assert _refusal(kind, tmp_path, reshape(mat, [rows * cols])) == \
        f"{weight} '{mat}' has shape ({rows * cols},), config says ({rows}, {cols})"
    assert _refusal(kind, tmp_path, lambda m, t: t.pop(vec)) == \
        f"{weights} do not match the config: '{vec}' is missing"
    assert _refusal(kind, tmp_path, lambda m, t: t.update({"extra.weight": ["F32", [1], b"\0\0\0\0"]})) == \
        f"{weights} do not match the config: unexpected tensor 'extra.weight'"
    assert tensors[vec][0] == "F16"
    assert _refusal(kind, tmp_path, lambda m, t: t[vec].__setitem__(0, "I16")) == \
        f"{weight} '{vec}' has dtype I16 (F32, F16 or BF16 expected)"

    def infinite(m, t):
        blob = bytearray(t[vec][2])
        blob[6:8] = struct.pack("<H", 0xFC00)   # element 3: -inf in float16
        t[vec][2] = bytes(blob)
    assert _refusal(kind, tmp_path, infinite).startswith(f"{weight} '{vec}' holds -inf at element 3: non-finite")
