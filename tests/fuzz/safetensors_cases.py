#!/usr/bin/env python3
"""Malformed (and a few valid) safetensors files, each judged by the reference implementation.

  safetensors_cases.py write DIR   make the files and DIR/manifest.json {file: "accept"|"reject"},
                                   the verdict being what the `safetensors` Python package does
  safetensors_cases.py check DIR   re-judge every file of DIR with the package; exit 1 on any
                                   verdict that differs from the manifest (exit 77: package missing)

The C++ reader must give the same verdict on every file (tests/test_safetensors.cpp reads the
manifest); this script proves the manifest is the reference's, not ours.
"""
import json
import os
import struct
import sys


def pack(header, data, claimed_len=None):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(raw) if claimed_len is None else claimed_len
    return struct.pack("<Q", n) + raw + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


GOOD = {"a": t("F32", [2], 0, 8), "b": t("F32", [1], 8, 12)}
GOOD_BYTES = json.dumps(GOOD).encode()


def cases():
    d12 = bytes(12)
    yield "good", pack(GOOD, d12)
    yield "good_metadata", pack({"__metadata__": {"format": "pt"}, **GOOD}, d12)
    yield "metadata_null", pack({"__metadata__": None, **GOOD}, d12)
    yield "empty_header", pack({}, b"")
    yield "zero_sized_tensors", pack({"a": t("F32", [0], 0, 0), "b": t("F32", [3, 0], 0, 0)}, b"")
    yield "names_not_in_offset_order", pack({"b": t("F32", [1], 0, 4), "a": t("F32", [2], 4, 12)}, d12)
    yield "extra_entry_field", pack({"a": {**t("F32", [2], 0, 8), "x": 1}, "b": t("F32", [1], 8, 12)}, d12)
    yield "whitespace_around_header", pack(b" \n" + GOOD_BYTES + b"  \t", d12)
    yield "duplicate_name_identical", pack(b'{"a":' + json.dumps(t("F32", [2], 0, 8)).encode() + b',"a":' +
                                           json.dumps(t("F32", [2], 0, 8)).encode() + b"}", bytes(8))
    yield "u16_tensor", pack({"a": t("U16", [1], 0, 2)}, bytes(2))
    # rejected by the reference
    yield "header_len_plus_1", pack(GOOD, d12, len(GOOD_BYTES) + 1)
    yield "header_len_minus_1", pack(GOOD, d12, len(GOOD_BYTES) - 1)
    yield "header_len_beyond_file", pack(GOOD, d12, 10**6)
    yield "header_len_over_100mb", struct.pack("<Q", 100000001) + b"{}"
    yield "header_len_2_63", struct.pack("<Q", 2**63) + b"{}"
    yield "file_of_4_bytes", b"1234"
    yield "trailing_data_byte", pack(GOOD, d12 + b"x")
    yield "trailing_byte_empty_header", pack({}, b"x")
    yield "trailing_nul_in_header", pack(GOOD_BYTES + b"\0", d12)
    yield "utf8_bom_before_header", pack(b"\xef\xbb\xbf" + GOOD_BYTES, d12)
    yield "gap_between_tensors", pack({"a": t("F32", [2], 0, 8), "b": t("F32", [1], 9, 13)}, bytes(13))
    yield "overlapping_tensors", pack({"a": t("F32", [2], 0, 8), "b": t("F32", [1], 4, 8)}, bytes(8))
    yield "first_tensor_not_at_0", pack({"a": t("F32", [1], 4, 8)}, bytes(8))
    yield "duplicate_name_conflicting", pack(b'{"a":' + json.dumps(t("F32", [2], 0, 8)).encode() + b',"a":' +
                                             json.dumps(t("F32", [1], 8, 12)).encode() + b"}", d12)
    yield "truncated_data", pack({"a": t("F32", [4], 0, 16)}, bytes(10))
    yield "shape_bytes_mismatch", pack({"a": t("F32", [3], 0, 16)}, bytes(16))
    yield "begin_after_end", pack({"a": t("F32", [0], 4, 0)}, bytes(4))
    yield "negative_dim", pack({"a": t("F32", [-1], 0, 4)}, bytes(4))
    yield "float_dim", pack({"a": t("F32", [1.0], 0, 4)}, bytes(4))
    yield "huge_number_dim", pack(b'{"a":{"dtype":"F32","shape":[' + b"9" * 400 + b'],"data_offsets":[0,4]}}', bytes(4))
    yield "shape_overflow", pack({"a": t("F32", [2**62, 8, 0], 0, 0)}, b"")
    yield "three_offsets", pack({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 4]}}, bytes(4))
    yield "offsets_null", pack({"a": {"dtype": "F32", "shape": [1], "data_offsets": None}}, bytes(4))
    yield "missing_dtype", pack({"a": {"shape": [1], "data_offsets": [0, 4]}}, bytes(4))
    yield "lowercase_dtype", pack({"a": t("f32", [1], 0, 4)}, bytes(4))
    yield "unknown_dtype", pack({"a": t("F8_E9", [1], 0, 1)}, bytes(1))
    yield "metadata_int_value", pack({"__metadata__": {"x": 1}, **GOOD}, d12)
    yield "metadata_array", pack({"__metadata__": [], **GOOD}, d12)
    yield "entry_not_object", pack({"a": [1, 2]}, b"")
    yield "header_array", pack(b"[]", b"")
    yield "header_bad_json", pack(b'{"a": {"dtype": ', b"")
    yield "header_bad_utf8", pack(b'{"\xff":' + json.dumps(t("F32", [1], 0, 4)).encode() + b"}", bytes(4))


def verdict(blob):
    import safetensors.numpy as stn
    try:
        stn.load(blob)
        return "accept"
    except Exception:
        return "reject"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    mode, out = sys.argv[1], sys.argv[2]
    try:
        import safetensors.numpy  # noqa: F401
    except ImportError:
        print("SKIP: the safetensors Python package is not installed")
        sys.exit(77)
    if mode == "write":
        os.makedirs(out, exist_ok=True)
        manifest = {}
        for name, blob in cases():
            with open(os.path.join(out, name + ".safetensors"), "wb") as f:
                f.write(blob)
            manifest[name + ".safetensors"] = verdict(blob)
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"{len(manifest)} files, {sum(v == 'reject' for v in manifest.values())} rejected by the reference")
        return
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    bad = 0
    for name, expected in sorted(manifest.items()):
        got = verdict(open(os.path.join(out, name), "rb").read())
        if got != expected:
            print(f"{name}: manifest says {expected}, the safetensors package says {got}")
            bad += 1
    print(f"{len(manifest)} files checked against the reference, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
