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

# ---- fuzz_spec: flags (1 spec given, 2/4/8/16 set BACKEND/DEVICE/ISA/THREADS,
# 64 query ctx info), then spec NUL backend NUL device NUL isa NUL threads
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
    ("everything", 0x7F, ["auto", "cuda:0", "0", "scalar", "2"]),
]
for name, flags, strs in spec:
    write("fuzz_spec", name, bytes([flags]) + b"\0".join(s.encode() for s in strs))
