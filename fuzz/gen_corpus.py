#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/).

Deterministic (fixed seeds), small files: one per interesting region of
each target's input layout, described in the target's header comment.
Run from anywhere: python3 fuzz/gen_corpus.py

Added by hand, not written here: fuzz_weights/nan_payload_batch_bf16, the
input that showed a batched row and the same row alone giving NaNs of
different payload and sign (now accepted: NaN is NaN), kept as a seed for
that path.
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def rnd(seed, n):
    r = random.Random(seed)
    return bytes(r.randrange(256) for _ in range(n))


def f32(*vals):
    return b"".join(struct.pack("<f", v) for v in vals)


def u32(*vals):
    return b"".join(struct.pack("<I", v & 0xFFFFFFFF) for v in vals)


def u64(*vals):
    return b"".join(struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF) for v in vals)


# ---- fuzz_weights: flags nsel ksel msel csel esel [fmt n k g] data scales x gamma
# flags: 1 Q2_0, 2 g128, 4 raw shape, 8 x bf16, 16 y bf16, 32 norm, 64 gamma bf16, 128 tame
TAME = 0x80
weights = [
    ("nf4_tame", bytes([TAME, 1, 0, 0, 0, 0]) + rnd(1, 2 * 32 + 2 * 2 + 64)),
    ("nf4_tame_norm_m3", bytes([TAME | 32, 3, 1, 2, 1, 1]) + rnd(2, 4 * 64 + 8 * 2 + 3 * 128 + 128)),
    ("q2_64_tame", bytes([TAME | 1, 2, 1, 0, 2, 0]) + rnd(3, 3 * 2 * 18 + 128)),
    ("q2_128_bf16_m3", bytes([TAME | 1 | 2 | 8 | 16, 1, 0, 2, 3, 2]) + rnd(4, 2 * 34 + 3 * 128)),
    ("q2_128_norm_bf16g", bytes([TAME | 1 | 2 | 32 | 64, 0, 3, 1, 4, 3]) + rnd(5, 4 * 34 + 2 * 512 + 512)),
    ("nf4_nan_scale", bytes([0, 0, 0, 0, 0, 0]) + rnd(6, 32) + u32(0x7FC00000)),
    ("nf4_raw_values", bytes([8 | 16, 2, 1, 1, 5, 0]) + rnd(7, 3 * 64 + 6 * 4 + 2 * 128 * 2)),
    ("q2_inf_d", bytes([1, 1, 0, 0, 0, 0]) + bytes([0x00, 0x7C]) + rnd(8, 16) + bytes([0x00, 0x3C]) + rnd(9, 16)),
    ("eps_zero", bytes([TAME | 32, 0, 0, 0, 0, 0xFF]) + u32(0) + rnd(10, 32 + 2 + 64 + 64)),
    ("eps_nan", bytes([TAME | 32, 0, 0, 0, 1, 0xF0]) + u32(0x7FC00000) + rnd(11, 32 + 2 + 64 + 64)),
    ("raw_shape_garbage", bytes([4, 0, 0, 0, 0, 0, 7]) + u64(-1, 64) + u32(64)),
    ("raw_shape_overflow", bytes([4, 0, 0, 0, 0, 0, 0]) + u64(1 << 40, 1 << 40) + u32(64)),
    ("raw_shape_q2_128", bytes([4 | TAME, 0, 0, 1, 0, 0, 1]) + u64(3, 256) + u32(128) + rnd(12, 3 * 2 * 34 + 2 * 256)),
    ("raw_shape_nf4_group0", bytes([4 | TAME, 0, 0, 0, 1, 0, 0]) + u64(2, 128) + u32(0) + rnd(13, 128 + 8 + 128)),
    ("raw_shape_bad_group", bytes([4, 0, 0, 0, 0, 0, 1]) + u64(1, 96) + u32(96)),
]
for name, data in weights:
    write("fuzz_weights", name, data)

# ---- fuzz_formats: op, then the op's bytes
# quantize / dequantize / reference: b = 1 Q2_0, 2 g128, n-1 at bits 2-3,
# k/g-1 at bits 4-5, 64 raw (quantize) or tame scales (others), 128 scale
formats = [
    ("quantize_nf4", bytes([0, 0x00]) + rnd(20, 64 * 4)),
    ("quantize_q2_128", bytes([0, 0x01 | 0x02 | 0x04 | 0x80]) + rnd(21, 2 * 128 * 4)),
    ("quantize_raw_nan", bytes([0, 0x40 | 0x04]) + f32(*([1.5] * 64)) + u32(0x7FC00000) + f32(*([0.25] * 63))),
    ("quantize_q2_big", bytes([0, 0x41]) + f32(*([70000.0] + [1.0] * 63))),
    ("quantize_q2_fp16_edge", bytes([0, 0x41]) + f32(*([65504.0, 65519.0, -65520.0] + [3.0] * 61))),
    ("quantize_zero_block", bytes([0, 0x40 | 0x10]) + f32(*([0.0] * 64 + [1e-40] * 64))),
    ("dequantize_nf4_tame", bytes([1, 0x40 | 0x14]) + rnd(22, 2 * 128 // 2 + 2 * 2 * 2)),
    ("dequantize_q2_raw", bytes([1, 0x01 | 0x2C]) + rnd(23, 3 * 3 * 18)),
    ("dequantize_nf4_inf", bytes([1, 0x00]) + rnd(24, 32) + u32(0x7F800000)),
    ("reference_nf4_norm", bytes([2, 0x40 | 0x04]) + rnd(25, 64 + 4) + bytes([0x10 | 0x02]) + rnd(26, 3 * 64 * 4 + 64 * 4)),
    ("reference_q2_bf16", bytes([2, 0x03]) + rnd(27, 34) + bytes([0x04 | 0x08 | 0x10 | 0x01]) + rnd(28, 2 * 128 * 2 + 128 * 2)),
    ("reference_bad_eps", bytes([2, 0x40]) + rnd(29, 32 + 4) + bytes([0x10 | 0x20]) + u32(0xBF800000) + rnd(30, 64 * 4 + 64 * 4)),
    ("reference_no_bound", bytes([2, 0x40]) + rnd(31, 32 + 4) + bytes([0x40]) + rnd(32, 64 * 4)),
]
conv = [0x00000000, 0x80000000, 0x7F7FFFFF, 0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001, 0x38800000,
        0x387FFFFF, 0x7FC00001, 0xFF800000, 0x00000001, 0x3F808000, 0x3F818000, 0x7F7F8000, 0x7F7F7FFF]
for v in conv:
    formats.append(("convert_%08x" % v, bytes([3]) + u32(v)))
sizes = [
    ("sizes_boundary_nf4", bytes([4, 0, 0]) + u64(2, (0x7FFFFFFFFFFFFFFF // 64) * 64) + u32(64)),
    ("sizes_boundary_q2", bytes([4, 1, 0]) + u64(0x7FFFFFFFFFFFFFFF // 34, 128) + u32(128)),
    ("sizes_garbage", bytes([4, 0xFE, 0]) + u64(-5, 1 << 63) + u32(0x80000000)),
    ("sizes_shifted", bytes([4, 1, 0x0F | 0x20]) + u64(1 << 62, 1 << 62) + u32(0)),
]
formats += sizes
for name, data in formats:
    write("fuzz_formats", name, data)

# ---- fuzz_spec: flags (1 spec given, 2/4/8/16/32 set
# BACKEND/DEVICE/ISA/THREADS/CPU_BIND, 64 query ctx info), then spec NUL
# backend NUL device NUL isa NUL threads NUL bind
spec = [
    ("cpu", 1 | 64, ["cpu"]),
    ("auto", 1, ["auto"]),
    ("cuda", 1, ["cuda"]),
    ("cuda_1", 1, ["cuda:1"]),
    ("cpu_0", 1, ["cpu:0"]),
    ("cpu_3", 1, ["cpu:3"]),
    ("empty_spec", 1, [""]),
    ("colon", 1, [":"]),
    ("auto_colon", 1, ["auto:0"]),
    ("cuda_big", 1, ["cuda:99999999999999999999"]),
    ("cuda_neg", 1, ["cuda:-1"]),
    ("long_name", 1, ["cudacudacudacudacuda"]),
    ("env_backend_cpu", 2, ["", "cpu"]),
    ("env_backend_empty", 2, ["", ""]),
    ("env_backend_junk", 2, ["", "gpu:0"]),
    ("env_device", 4 | 1, ["cpu", "", "1"]),
    ("env_device_junk", 4, ["", "", "0x1"]),
    ("env_isa_ref", 8 | 1 | 64, ["cpu", "", "", "ref"]),
    ("env_isa_scalar", 8 | 2, ["", "cpu", "", "scalar"]),
    ("env_isa_avx512", 8 | 1, ["cpu", "", "", "avx512"]),
    ("env_isa_junk", 8 | 1, ["cpu", "", "", "sse9"]),
    ("env_threads", 16 | 1 | 64, ["cpu", "", "", "", "3"]),
    ("env_threads_zero", 16 | 1, ["cpu", "", "", "", "0"]),
    ("env_threads_big", 16 | 1, ["cpu", "", "", "", "4097"]),
    ("env_threads_space", 16 | 1, ["cpu", "", "", "", " 4"]),
    ("env_threads_junk", 16 | 1, ["cpu", "", "", "", "2x"]),
    ("env_bind_none", 32 | 16 | 1 | 64, ["cpu", "", "", "", "2", "none"]),
    ("env_bind_cores", 32 | 1, ["cpu", "", "", "", "", "cores"]),
    ("env_bind_junk", 32 | 1, ["cpu", "", "", "", "", "spread"]),
    ("everything", 0x7F, ["auto", "cuda:0", "0", "scalar", "2", "none"]),
]
for name, flags, strs in spec:
    write("fuzz_spec", name, bytes([flags]) + b"\0".join(s.encode() for s in strs))

# ---- fuzz_model: whole model files (GGUF, safetensors), small


def gstr(s):
    b = s.encode()
    return u64(len(b)) + b


def gguf(kvs, tensors, alignment=32, version=3):
    """kvs: (key, type, payload bytes); tensors: (name, type, ne list, data)."""
    out = b"GGUF" + u32(version) + u64(len(tensors)) + u64(len(kvs))
    for key, vtype, payload in kvs:
        out += gstr(key) + u32(vtype) + payload
    offset, blobs = 0, []
    for name, ttype, ne, data in tensors:
        out += gstr(name) + u32(len(ne)) + u64(*ne) + u32(ttype) + u64(offset)
        pad = (-len(data)) % alignment
        blobs.append(data + bytes(pad))
        offset += len(data) + pad
    out += bytes((-len(out)) % alignment)
    return out + b"".join(blobs)


def q2_blocks(rows, k, group, seed):
    r = random.Random(seed)
    out = b""
    for _ in range(rows * k // group):
        out += struct.pack("<e", r.uniform(0.001, 0.1)) + bytes(r.randrange(256) for _ in range(group // 4))
    return out


def safetensors(entries, meta=None):
    """entries: (name, dtype, shape, data)."""
    import json
    header, data = {}, b""
    if meta:
        header["__metadata__"] = meta
    for name, dtype, shape, blob in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = json.dumps(header).encode()
    return u64(len(h)) + h + data


def bnb(name, n, k, nested, seed):
    """A bitsandbytes NF4 Linear weight as Linear4bit._save_to_state_dict
    writes it (see tests/test_model_bnb.c for the source facts)."""
    import json
    r = random.Random(seed)
    blocks = n * k // 64
    ents = [(name, "U8", [n * k // 2, 1], rnd(seed, n * k // 2))]
    nf4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
           -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
           0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
           0.7229568362236023, 1.0]
    state = {"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [n, k]}
    if nested:
        groups = (blocks + 255) // 256
        ents.append((name + ".absmax", "U8", [blocks], rnd(seed + 1, blocks)))
        ents.append((name + ".nested_absmax", "F32", [groups], f32(*[r.uniform(0.01, 0.1) for _ in range(groups)])))
        ents.append((name + ".nested_quant_map", "F32", [256], f32(*[-1 + i * 2 / 255 for i in range(256)])))
        state.update({"nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.05})
    else:
        ents.append((name + ".absmax", "F32", [blocks], f32(*[r.uniform(0.01, 0.1) for _ in range(blocks)])))
    ents.append((name + ".quant_map", "F32", [16], f32(*nf4)))
    js = json.dumps(state).encode()
    ents.append((name + ".quant_state.bitsandbytes__nf4", "U8", [len(js)], js))
    return ents


norm = f32(*[1.0 + i / 512 for i in range(128)])
model_seeds = [
    ("gguf_q2_g64", gguf([("general.architecture", 8, gstr("llama"))],
                         [("blk.0.ffn_down.weight", 42, [128, 4], q2_blocks(4, 128, 64, 40)),
                          ("blk.0.ffn_norm.weight", 0, [128], norm)])),
    ("gguf_q2_g128", gguf([("general.alignment", 4, u32(64))],
                          [("blk.0.attn_q.weight", 42, [512, 8], q2_blocks(8, 512, 128, 41)),
                           ("token_embd.weight", 2, [64, 2], rnd(42, 72))], alignment=64)),
    ("gguf_q2_ambiguous", gguf([], [("w", 42, [128, 1], q2_blocks(1, 128, 128, 43))])),
    ("gguf_metadata", gguf([("u8", 0, bytes([7])), ("i16", 3, struct.pack("<h", -5)), ("b", 7, bytes([1])),
                            ("f64", 12, struct.pack("<d", 2.5)), ("tokens", 9, u32(8) + u64(2) + gstr("a") + gstr("bc")),
                            ("nested", 9, u32(9) + u64(1) + u32(4) + u64(2) + u32(1, 2)),
                            ("general.name", 8, gstr("seed"))],
                           [("f16", 1, [64, 2], rnd(44, 256)), ("bf16", 30, [64], rnd(45, 128))], version=2)),
    ("st_plain", safetensors([("model.norm.weight", "F32", [128], norm),
                              ("lm_head.weight", "BF16", [4, 64], rnd(46, 512)),
                              ("model.embed.weight", "F16", [2, 64], rnd(47, 256))], {"format": "pt"})),
    ("st_bnb", safetensors(bnb("model.layers.0.mlp.down_proj.weight", 4, 128, False, 48), {"format": "pt"})),
    ("st_bnb_nested", safetensors(bnb("model.layers.0.self_attn.q_proj.weight", 8, 64, True, 49))),
]
for name, data in model_seeds:
    write("fuzz_model", name, data)
