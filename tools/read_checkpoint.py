#!/usr/bin/python3
"""Reads checkpoints as PyTorch users would, to check files tessera wrote.

  read_checkpoint.py FILE.pt           torch.load
  read_checkpoint.py FILE.safetensors  the format's specification, parsed here

An optimizer's state_dict prints its param_groups, then its state tensors
as state.<index>.<name>. Prints one line per tensor: name, dtype, shape, stride, storage offset, the
name of the first tensor sharing its storage (or '-'), and the values
('%.17g', flattened). test_io.cpp prints the same from its own tensors.
"""
import json
import struct
import sys

import torch


def safetensors(path):
    dtypes = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
              "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0, "header not padded to 8 bytes"
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out, end = {}, 0
    for name, info in sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                             key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = info["data_offsets"]
        assert begin == end, "gap or overlap before " + name
        end = stop
        t = torch.frombuffer(bytearray(data[begin:stop]), dtype=dtypes[info["dtype"]]) if stop > begin \
            else torch.empty(0, dtype=dtypes[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    assert end == len(data), "data not covered exactly"
    for k, v in header.get("__metadata__", {}).items():
        print("metadata", k, v)
    return out


def main(path):
    d = safetensors(path) if path.endswith(".safetensors") else torch.load(path)
    if set(d.keys()) == {"state", "param_groups"}:  # an optimizer's state_dict
        print("param_groups", d["param_groups"])
        d = {"state.%d.%s" % (i, k): v for i, s in d["state"].items() for k, v in s.items() if torch.is_tensor(v)}
    first = {}
    for name, t in d.items():
        ptr = t.storage().data_ptr()
        shared = first.setdefault(ptr, name)
        values = " ".join("%.17g" % v for v in t.detach().double().flatten().tolist())
        print(name, str(t.dtype).replace("torch.", ""), list(t.shape), list(t.stride()), t.storage_offset(),
              shared if shared != name else "-", values)


if __name__ == "__main__":
    main(sys.argv[1])
