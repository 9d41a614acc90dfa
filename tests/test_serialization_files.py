"""Checkpoint files against torch 2.13: bad and hostile files, archive checks, save's file
semantics (permissions, symlinks, read-only targets, interruptions), stride-0 tensors,
map_location, weights_only messages and the torch.serialization safe-globals API.

Each table sweeps one class of files against real torch: the exception class (and, where
torchlike follows it, the message) must be torch's."""
import io
import os
import pickle
import signal
import stat
import subprocess
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchlike
import torchlike.serialization as tls

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _outcome(fn):
    try:
        return fn(), None
    except BaseException as e:  # noqa: BLE001
        return None, e


def _same_class(ours, theirs):
    """Our exception has torch's class; where torch's unpickler fails with an internal class
    (IndexError, KeyError, struct.error, ...) ours is a RuntimeError that is also that class."""
    assert ours is not None and theirs is not None, (ours, theirs)
    if type(ours) is type(theirs):
        return
    assert isinstance(ours, type(theirs)) and isinstance(ours, RuntimeError), (
        f"ours {type(ours).__mro__} vs torch {type(theirs)}: {ours!r} / {theirs!r}")


def _torch_ckpt(obj, **kw):
    b = io.BytesIO()
    torch.save(obj, b, **kw)
    return b.getvalue()


def _payloads():
    g = torch.Generator().manual_seed(0)
    return {
        "f32": {"w": torch.randn(100, generator=g)},
        "i64_2d": {"w": torch.arange(12).reshape(3, 4), "n": 3},
        "bf16_3d": [torch.ones(2, 2, 2, dtype=torch.bfloat16)],
        "state": OrderedDict(a=torch.randn(4, 3, generator=g), b=torch.zeros(3),
                             c=torch.tensor([True, False])),
    }


def _zip(records, comp=zipfile.ZIP_STORED):
    z = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zipfile warns on duplicate names
        with zipfile.ZipFile(z, "w") as zf:
            for n, d in records:
                zf.writestr(zipfile.ZipInfo(n), d, compress_type=comp)
    return z.getvalue()


def _records(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def _cmp_load(data, tmp_path=None, values=True, **kw):
    """Load ``data`` with both libraries (from a BytesIO, and from a file when tmp_path is
    given): same outcome, same exception class, equal values."""
    sources = [lambda: io.BytesIO(data)]
    if tmp_path is not None:
        p = tmp_path / "case.pt"
        p.write_bytes(data)
        sources.append(lambda: p)
    results = []
    for src in sources:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, oe = _outcome(lambda: torchlike.load(src(), **kw))
            theirs, te = _outcome(lambda: torch.load(src(), **kw))
        if te is None:
            assert oe is None, f"torch loads it, torchlike raises {oe!r}"
            if values:
                _assert_same(ours, theirs)
        else:
            _same_class(oe, te)
        results.append((oe, te))
    return results


def _assert_same(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
        a = np.array(ours.detach().float()._data if ours.dtype is torchlike.bfloat16
                     else ours.detach()._data)
        b = (theirs.detach().float() if theirs.dtype == torch.bfloat16 else theirs.detach())
        np.testing.assert_array_equal(a, b.numpy())
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    else:
        assert ours == theirs


# ============================================================================ torch's legacy format
def _legacy_payloads():
    g = torch.Generator().manual_seed(0)
    base = torch.arange(12.).reshape(3, 4)
    lin = torch.nn.Linear(3, 2)
    return {**_payloads(),
            "dtypes": {str(d): torch.arange(6).to(d) for d in (
                torch.float16, torch.float64, torch.int8, torch.uint8, torch.int16,
                torch.int32, torch.bool, torch.complex64)},
            "views_share_storage": {"base": base, "col": base[:, 1], "t": base.t()},
            "parameter_and_grad": {"p": torch.nn.Parameter(torch.randn(3, generator=g)),
                                   "r": torch.ones(2, requires_grad=True)},
            "state_dict": lin.state_dict(),
            "scalars_and_empty": (torch.tensor(3.5), torch.empty(0, 4), None, "s", 1.5)}


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("payload", sorted(_legacy_payloads()))
def test_legacy_format_checkpoints_load_as_torch(payload, weights_only):
    """Files written by torch before 1.6 (``_use_new_zipfile_serialization=False``): the same
    values, dtypes, strides and storage sharing as torch reads them; every cut of one raises."""
    obj = _legacy_payloads()[payload]
    data = _torch_ckpt(obj, _use_new_zipfile_serialization=False)
    _cmp_load(data, weights_only=weights_only)
    ours = torchlike.load(io.BytesIO(data), weights_only=weights_only)
    theirs = torch.load(io.BytesIO(data), weights_only=weights_only)
    if payload == "views_share_storage":
        for k in theirs:
            assert ours[k].stride() == theirs[k].stride()
            assert ours[k].storage_offset() == theirs[k].storage_offset()
        ours["base"].add_(1)            # (one storage: the views see the write)
        np.testing.assert_array_equal(ours["col"].numpy(), theirs["col"].numpy() + 1)
    if payload == "parameter_and_grad":
        assert type(ours["p"]).__name__ == "Parameter" and ours["r"].requires_grad
    if payload == "state_dict":
        assert getattr(ours, "_metadata", None) == getattr(theirs, "_metadata", None)
    if payload == "f32":
        # (a cut inside a pickle may raise another class than torch's: EOFError for
        # UnpicklingError; both refuse every cut)
        step = max(1, len(data) // 17)
        for cut in list(range(0, len(data), step)) + [len(data) - 1]:
            _, te = _outcome(lambda: torch.load(io.BytesIO(data[:cut]),
                                                weights_only=weights_only))
            _, oe = _outcome(lambda: torchlike.load(io.BytesIO(data[:cut]),
                                                    weights_only=weights_only))
            assert te is not None and oe is not None, cut


def test_legacy_format_whole_module_refused_as_in_the_zip_format():
    """A whole torch module pickled (torch's classes: DIFFERENCES.md) is refused by both
    formats with the same error; weights_only refuses its class as torch does."""
    lin = torch.nn.Linear(3, 2)
    legacy = _torch_ckpt(lin, _use_new_zipfile_serialization=False)
    _, te = _outcome(lambda: torch.load(io.BytesIO(legacy)))
    _, oe = _outcome(lambda: torchlike.load(io.BytesIO(legacy)))
    _same_class(oe, te)
    _, le = _outcome(lambda: torchlike.load(io.BytesIO(legacy), weights_only=False))
    _, ze = _outcome(lambda: torchlike.load(io.BytesIO(_torch_ckpt(lin)), weights_only=False))
    assert type(le) is type(ze) and str(le) == str(ze)


# ============================================================================ bad files
def _bad_files():
    good = _torch_ckpt(_payloads()["f32"])
    legacy = _torch_ckpt({"w": torch.arange(100.)}, _use_new_zipfile_serialization=False)
    npy = io.BytesIO()
    np.save(npy, np.arange(5))
    rnd = np.random.default_rng(0).integers(0, 256, 1000, dtype=np.uint8).tobytes()
    cases = {
        "empty": b"", "one_byte_proto": b"\x80", "PK": b"PK", "PK_header_only": b"PK\x03\x04",
        "text": b"this is not a checkpoint at all" * 10, "json": b'{"a": 1}', "npy": npy.getvalue(),
        "random": rnd, "random_PK": b"PK\x03\x04" + rnd,
        "pickle_dict_p2": pickle.dumps({"a": 1}, protocol=2),
        "pickle_dict_p4": pickle.dumps({"a": 1}, protocol=4),
        "pickle_int": pickle.dumps(5, protocol=2),
        "pickle_truncated": pickle.dumps({"a": list(range(100))}, protocol=2)[:50],
        "pickle_memo_miss": b"\x80\x02h\x05.",
        "pickle_short_int": b"\x80\x02J\x01\x02",
        "legacy_truncated_half": legacy[:len(legacy) // 2],
        "legacy_truncated_10": legacy[:10],
        "legacy_truncated_30": legacy[:30],
        "zip_empty": _zip([]),
        "zip_other": _zip([("readme.txt", b"hello")]),
        "zip_no_datapkl": _zip([("archive/foo", b"x")]),
        "zip_datapkl_garbage": _zip([("archive/data.pkl", b"garbage"),
                                     ("archive/version", b"3\n")]),
        "zip_datapkl_truncated": _zip([("archive/data.pkl", pickle.dumps(
            {"a": list(range(100))}, protocol=2)[:50]), ("archive/version", b"3\n")]),
        "zip_datapkl_empty": _zip([("archive/data.pkl", b""), ("archive/version", b"3\n")]),
        "zip_datapkl_stack_underflow": _zip([("archive/data.pkl", b"\x80\x02}s."),
                                            ("archive/version", b"3\n")]),
        "zip_plain_no_version": _zip([("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2))]),
        "zip_no_prefix": _zip([("data.pkl", pickle.dumps(1, protocol=2))]),
    }
    for name, cut in [("10", 10), ("100", 100), ("half", len(good) // 2),
                      ("90pct", int(len(good) * .9)), ("minus22", len(good) - 22),
                      ("minus1", len(good) - 1)]:
        cases["zip_truncated_" + name] = good[:cut]
    return cases


BAD = _bad_files()


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_raise_torchs_class(tmp_path, name, weights_only):
    for oe, te in _cmp_load(BAD[name], tmp_path, weights_only=weights_only):
        assert te is not None, "the table holds files torch refuses"
        if isinstance(te, pickle.UnpicklingError) and weights_only:
            assert str(oe).startswith("Weights only load failed.")
        if type(te) is RuntimeError and "PytorchStreamReader failed reading zip archive" in str(te):
            assert str(oe).startswith(str(te).split(".")[0])


@pytest.mark.parametrize("payload", sorted(_payloads()))
def test_truncated_checkpoints_every_few_bytes(payload):
    """Every cut of four checkpoints (dtypes/shapes): torch's class each time, and an intact
    file loads equal."""
    data = _torch_ckpt(_payloads()[payload])
    _cmp_load(data)
    step = max(1, len(data) // 23)
    for cut in list(range(0, len(data), step)) + [len(data) - 1]:
        for oe, te in _cmp_load(data[:cut]):
            assert te is not None and oe is not None


def test_crc_mismatch_detected_where_torch_reads_garbage():
    """DIFFERENCES.md: a flipped byte in a tensor record loads silently wrong values in torch;
    torchlike checks each record's CRC and raises RuntimeError."""
    for payload in ("f32", "i64_2d", "bf16_3d"):
        good = _torch_ckpt(_payloads()[payload])
        rec = dict(_records(good))["archive/data/0"]
        bad = bytearray(good)
        i = good.find(rec)
        bad[i + len(rec) // 2] ^= 0x10
        t = torch.load(io.BytesIO(bytes(bad)))                    # torch: no error
        assert t is not None
        with pytest.raises(RuntimeError, match="corrupt"):
            torchlike.load(io.BytesIO(bytes(bad)))


# ============================================================================ archive checks
def _variants():
    good = _torch_ckpt({"w": torch.arange(8.), "v": torch.arange(3)})
    recs = _records(good)
    pk2 = pickle.dumps({"x": 1}, protocol=2)

    def repl(suffix, value):
        return [(n, value if n.endswith(suffix) else d) for n, d in recs]

    def drop(suffix):
        return [(n, d) for n, d in recs if not n.endswith(suffix)]

    out = {"rebuilt": _zip(recs), "deflated": _zip(recs, zipfile.ZIP_DEFLATED),
           "no_version": _zip(drop("/version")), "no_datapkl": _zip(drop("data.pkl")),
           "no_data0": _zip(drop("data/0")), "no_byteorder": _zip(drop("byteorder")),
           "no_format_version": _zip(drop(".format_version")),
           "data_version_only": _zip(drop("/version") + [("archive/.data/version", b"3\n")]),
           "byteorder_big": _zip(repl("/byteorder", b"big")),
           "byteorder_weird": _zip(repl("/byteorder", b"middle")),
           "short_record": _zip([(n, d[:-4] if n.endswith("data/0") else d) for n, d in recs]),
           "long_record": _zip([(n, d + b"\0" * 8 if n.endswith("data/0") else d)
                                for n, d in recs]),
           "other_prefix_extra": _zip(recs + [("zzz/data.pkl", pk2)]),
           "other_prefix_first": _zip([("zzz/data.pkl", pk2)] + recs),
           "nested_prefix": _zip([("a/b/" + n.split("/", 1)[1], d) for n, d in recs]),
           "renamed_prefix": _zip([("foo/" + n.split("/", 1)[1], d) for n, d in recs])}
    for v in [b"abc", b"99\n", b"0\n", b"1\n", b"2\n", b"10\n", b"11\n", b"", b"-1"]:
        out["version_" + v.decode().strip()] = _zip(repl("/version", v))
    return out


VARIANTS = _variants()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_archive_variants_as_torch(name):
    [(oe, te)] = _cmp_load(VARIANTS[name])
    if te is not None and type(te) is RuntimeError and "enforce fail" in str(te):
        assert str(oe) == str(te)                    # torch's message, word for word
    if te is not None and "PytorchStreamReader failed locating" in str(te):
        assert str(oe).startswith(str(te))


def test_duplicate_records_refused():
    """DIFFERENCES.md: torch reads one of two records of the same name (which one depends on
    miniz's sort); torchlike refuses the archive."""
    recs = _records(_torch_ckpt({"w": torch.arange(8.)}))
    seven = np.full(8, 7, np.float32).tobytes()
    for dup in (recs + [("archive/data/0", seven)], [("archive/data/0", seven)] + recs,
                recs + [("archive/data.pkl", pickle.dumps({"x": 1}, protocol=2))],
                recs + [("archive/version", b"99\n")]):
        data = _zip(dup)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert isinstance(torch.load(io.BytesIO(data)), dict)
        with pytest.raises(RuntimeError, match="more than one record"):
            torchlike.load(io.BytesIO(data))


def _bomb(numel, claimed, payload=b"\0" * 4096):
    """torchlike's checkpoint of ``zeros(numel)`` whose data/0 record is ``payload`` deflated,
    with headers patched to claim ``claimed`` uncompressed bytes."""
    ours = io.BytesIO()
    torchlike.save({"w": torchlike.zeros(numel)}, ours)
    recs = _records(ours.getvalue())
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        for n, d in recs:
            comp = zipfile.ZIP_DEFLATED if n.endswith("data/0") else zipfile.ZIP_STORED
            zf.writestr(zipfile.ZipInfo(n), payload if n.endswith("data/0") else d,
                        compress_type=comp)
    data = bytearray(z.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        lh = zf.getinfo("archive/data/0").header_offset
    data[lh + 22:lh + 26] = claimed.to_bytes(4, "little")          # local header
    pos = 0
    while (pos := bytes(data).find(b"PK\x01\x02", pos)) >= 0:     # central directory
        nlen = int.from_bytes(data[pos + 28:pos + 30], "little")
        if bytes(data[pos + 46:pos + 46 + nlen]) == b"archive/data/0":
            data[pos + 24:pos + 28] = claimed.to_bytes(4, "little")
        pos += 4
    return bytes(data)


def test_decompression_is_bounded():
    """A deflated record that claims more than deflate can produce (a zip bomb) is refused
    before anything is inflated; honest deflated checkpoints load as in torch."""
    data = _bomb(1, 2**31)                                # 2 GiB claimed from ~20 bytes
    with pytest.raises(RuntimeError, match="more than deflate can"):
        torchlike.load(io.BytesIO(data))
    # a record that inflates to fewer bytes than it claims: RuntimeError, nothing hangs
    data = _bomb(2048, 8192)
    with pytest.raises(RuntimeError, match="corrupt"):
        torchlike.load(io.BytesIO(data))
    honest = _zip(_records(_torch_ckpt(_payloads()["state"])), zipfile.ZIP_DEFLATED)
    _cmp_load(honest)


def test_big_endian_and_default_load_endianness():
    """byteorder 'big' files and files without a byteorder record under each
    set_default_load_endianness setting read as torch reads them."""
    recs = _records(_torch_ckpt({"a": torch.arange(6, dtype=torch.float32).reshape(2, 3),
                                 "b": torch.arange(4, dtype=torch.int64),
                                 "c": torch.ones(3, dtype=torch.float16)}))
    swapped = []
    for n, d in recs:
        if n.endswith("/byteorder"):
            d = b"big"
        elif n.endswith("data/0") or n.endswith("data/2"):
            d = np.frombuffer(d, "<f4" if n.endswith("0") else "<f2").byteswap().tobytes()
        elif n.endswith("data/1"):
            d = np.frombuffer(d, "<i8").byteswap().tobytes()
        swapped.append((n, d))
    _cmp_load(_zip(swapped))
    no_mark = _zip([(n, d) for n, d in swapped if not n.endswith("/byteorder")])
    assert torchlike.serialization.get_default_load_endianness() is None
    assert torch.serialization.get_default_load_endianness() is None
    _cmp_load(no_mark)                                    # read as little endian by both
    try:
        for name in ("BIG", "LITTLE", "NATIVE"):
            torch.serialization.set_default_load_endianness(
                getattr(torch.serialization.LoadEndianness, name))
            tls.set_default_load_endianness(getattr(tls.LoadEndianness, name))
            _cmp_load(no_mark)
    finally:
        torch.serialization.set_default_load_endianness(None)
        tls.set_default_load_endianness(None)
    with pytest.raises(TypeError, match="Invalid argument type"):
        tls.set_default_load_endianness("big")


# ============================================================================ stride-0 tensors
EXPANDED = [((3, 1), (3, 4), "float32"), ((1,), (5,), "int64"), ((), (2, 3), "bool"),
            ((2, 1, 3), (2, 4, 3), "bfloat16"), ((1, 1), (6, 7), "float64"),
            ((4, 1), (2, 4, 5), "int8")]


@pytest.mark.parametrize("small,size,dtype", EXPANDED)
def test_expanded_tensors_load_as_views_of_their_small_storage(small, size, dtype):
    g = torch.Generator().manual_seed(1)
    base = (torch.randn(small, generator=g) * 10).to(getattr(torch, dtype))
    t = base.expand(size)
    data = _torch_ckpt({"e": t, "plain": base})
    ref = torch.load(io.BytesIO(data))
    assert ref["e"].untyped_storage().nbytes() == base.numel() * base.element_size()
    ours = torchlike.load(io.BytesIO(data))
    _assert_same(ours, ref)
    e = ours["e"]
    assert e._base is not None and e._base.numel() == base.numel()
    assert not e.is_contiguous() and not ref["e"].is_contiguous()
    # writing into it is refused as torch refuses it (several elements share one location)
    _, te = _outcome(lambda: ref["e"].add_(1))
    _, oe = _outcome(lambda: e.add_(1))
    _same_class(oe, te)
    assert str(oe) == str(te)


@pytest.mark.parametrize("small,size,dtype", EXPANDED)
def test_expanded_tensors_saved_small_as_torch_saves_them(small, size, dtype):
    """torchlike writes an expanded view as torch does: its small storage plus strides."""
    a = (np.random.default_rng(2).standard_normal(small) * 10).astype(np.float32)
    outs = {}
    for m in (torch, torchlike):
        base = m.tensor(a).to(getattr(m, dtype))
        buf = io.BytesIO()
        m.save({"e": base.expand(size), "e2": base.expand(size)}, buf)
        outs[m.__name__] = buf.getvalue()
    recs = {m: {n.split("/", 1)[1]: d for n, d in _records(v) if "/data/" in n}
            for m, v in outs.items()}
    assert recs["torch"] == recs["torchlike"] and len(recs["torch"]) == 1
    theirs = torch.load(io.BytesIO(outs["torch"]))
    got = torch.load(io.BytesIO(outs["torchlike"]))
    _assert_same(torchlike.load(io.BytesIO(outs["torchlike"])), theirs)
    for k in ("e", "e2"):
        assert torch.equal(got[k], theirs[k])
        assert [s for s, n in zip(got[k].stride(), size) if n > 1] == \
            [s for s, n in zip(theirs[k].stride(), size) if n > 1]
    assert got["e"].untyped_storage().data_ptr() == got["e2"].untyped_storage().data_ptr()


def test_expanded_too_large_to_materialize_raises_instead_of_crashing():
    """DIFFERENCES.md: torch keeps a huge expanded tensor as a view of one element; torchlike's
    expand views hold their values, so one larger than memory raises RuntimeError."""
    t = torch.zeros(1).expand(2**45)
    data = _torch_ckpt({"e": t})
    assert torch.load(io.BytesIO(data))["e"].shape == (2**45,)
    with pytest.raises(RuntimeError, match="cannot materialize"):
        torchlike.load(io.BytesIO(data))


def test_out_of_bounds_strides_raise_torchs_error():
    ours = io.BytesIO()
    torchlike.save({"w": torchlike.arange(4.0)}, ours)
    recs = _records(ours.getvalue())
    pk = dict(recs)["archive/data.pkl"]
    # size (4,) -> (9,): the storage holds 4 elements
    bad = pk.replace(b"K\x04\x85", b"K\x09\x85", 1)
    assert bad != pk
    data = _zip([(n, bad if n.endswith("data.pkl") else d) for n, d in recs])
    [(oe, te)] = _cmp_load(data)
    assert str(oe) == str(te)


# ============================================================================ map_location
def _cuda_ckpt():
    """A checkpoint whose storages are tagged 'cuda:0' (torch's CPU build cannot write one)."""
    recs = _records(_torch_ckpt({"w": torch.arange(4.0), "v": torch.arange(3)}))
    out = []
    for n, d in recs:
        if n.endswith("data.pkl"):
            assert d.count(b"X\x03\x00\x00\x00cpu") == 1       # memoized after the first use
            d = d.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
        out.append((n, d))
    return _zip(out)


HAS_GPU = bool(tls._gpu_devices())
MAPS = ["cpu", "cuda", "cuda:0", "cuda:3", "meta_skip", "foo", "mps", "xla", "cpu:0",
        "device_cpu", {"cpu": "cpu"}, {"cpu": "cuda"}, {"cpu": "foo"}, {"x": "y"},
        {"cuda:0": "cpu"}, "fn_none", "fn_same", "fn_cpu", "fn_int", 3, b"cpu", ("cpu",), None]


def _ml(m, spec):
    if spec == "device_cpu":
        return m.device("cpu")
    if spec == "fn_none":
        return lambda s, loc: None
    if spec == "fn_same":
        return lambda s, loc: s
    if spec == "fn_cpu":
        return lambda s, loc: s.cpu()
    if spec == "fn_int":
        return lambda s, loc: 3
    return spec


@pytest.mark.parametrize("spec", [m for m in MAPS if m != "meta_skip"], ids=repr)
@pytest.mark.parametrize("source", ["cpu", "cuda"])
def test_map_location_forms_as_torch(spec, source):
    if HAS_GPU and ("cuda" in repr(spec) or source == "cuda"):
        pytest.skip("torch's CPU build is the oracle for CUDA errors")
    data = _torch_ckpt({"w": torch.arange(4.0), "v": torch.arange(3)}) if source == "cpu" \
        else _cuda_ckpt()
    ours, oe = _outcome(lambda: torchlike.load(io.BytesIO(data), map_location=_ml(torchlike,
                                                                                   spec)))
    theirs, te = _outcome(lambda: torch.load(io.BytesIO(data), map_location=_ml(torch, spec)))
    if te is None:
        assert oe is None, oe
        _assert_same(ours, theirs)
        assert ours["w"].device.type == "cpu"
    else:
        _same_class(oe, te)
        if isinstance(te, RuntimeError):
            assert str(oe) == str(te)


def test_map_location_callable_sees_each_storage_once():
    data = _torch_ckpt({"w": torch.arange(4.0), "v": torch.arange(3), "again": None})
    seen = {}
    for m in (torch, torchlike):
        calls = []
        m.load(io.BytesIO(data), map_location=lambda s, loc: calls.append((loc, s.nbytes())))
        seen[m.__name__] = calls
    assert seen["torch"] == seen["torchlike"] == [("cpu", 16), ("cpu", 24)]


def test_map_location_meta_is_refused_clearly():
    """DIFFERENCES.md: map_location='meta' raises NotImplementedError (torch gives meta
    tensors); loading to the CPU and moving with .to('meta') works."""
    data = _torch_ckpt({"w": torch.arange(4.0)})
    assert torch.load(io.BytesIO(data), map_location="meta")["w"].is_meta
    with pytest.raises(NotImplementedError, match="meta"):
        torchlike.load(io.BytesIO(data), map_location="meta")


# ============================================================================ weights_only
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


REFUSED = {"class": lambda: Point(1, 2), "np_scalar": lambda: np.float64(1.5),
           "deque": lambda: __import__("collections").deque([1]), "builtin_fn": lambda: print,
           "module": lambda: torch.nn.Linear(1, 1), "blocked_os": lambda: _Evil(),
           "np_array": lambda: np.arange(3), "slotted": lambda: Slotted(3)}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_weights_only_refusals_have_torchs_message(name):
    data = _torch_ckpt({"x": REFUSED[name](), "w": torch.ones(2)})
    _, te = _outcome(lambda: torch.load(io.BytesIO(data)))
    _, oe = _outcome(lambda: torchlike.load(io.BytesIO(data)))
    assert type(oe) is type(te) is pickle.UnpicklingError
    if "is blocked" in str(te):
        core = str(te).split("\n\n")[-2]
        assert core in str(oe) and str(oe).startswith(str(te).split("\n")[0])
    else:
        assert str(oe) == str(te)
    # and with weights_only=False both load it (torch objects other than tensors excepted)
    if name not in ("module", "blocked_os"):
        ours = torchlike.load(io.BytesIO(data), weights_only=False)
        theirs = torch.load(io.BytesIO(data), weights_only=False)
        assert type(ours["x"]) is type(theirs["x"])


def test_weights_only_argument_checks_as_torch():
    data = _torch_ckpt({"w": torch.ones(2)})
    for kw in ({"pickle_module": pickle, "weights_only": True}, {"mmap": True},
               {"pickle_module": pickle, "mmap": True}):
        _, te = _outcome(lambda: torch.load(io.BytesIO(data), **kw))
        _, oe = _outcome(lambda: torchlike.load(io.BytesIO(data), **kw))
        _same_class(oe, te)
        assert str(oe) == str(te)
    # pickle_module given: weights_only defaults to False in both (a plain object loads)
    data2 = _torch_ckpt({"p": Point(1, 2)})
    assert torchlike.load(io.BytesIO(data2), pickle_module=pickle)["p"].y == 2
    assert torch.load(io.BytesIO(data2), pickle_module=pickle)["p"].y == 2
    for m in (torch, torchlike):
        with pytest.warns(UserWarning, match="pickle_load_args only works"):
            m.load(io.BytesIO(data), encoding="latin1")


def test_force_weights_only_environment(monkeypatch):
    data = _torch_ckpt({"p": Point(1, 2)})
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    for m in (torch, torchlike):
        with pytest.raises(pickle.UnpicklingError):
            m.load(io.BytesIO(data), weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError, match="Only one of"):
            m.load(io.BytesIO(data))
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    for m in (torch, torchlike):
        with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
            assert m.load(io.BytesIO(data))["p"].x == 1


# ============================================================================ safe globals
@pytest.fixture
def clean_safe_globals():
    torch.serialization.clear_safe_globals()
    tls.clear_safe_globals()
    yield
    torch.serialization.clear_safe_globals()
    tls.clear_safe_globals()


def test_safe_globals_api_names_match_torch():
    public = {n for n in dir(torch.serialization) if not n.startswith("_")}
    wanted = {"add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
              "get_unsafe_globals_in_checkpoint", "get_default_load_endianness",
              "set_default_load_endianness", "LoadEndianness", "get_crc32_options",
              "set_crc32_options", "get_default_mmap_options", "set_default_mmap_options",
              "default_restore_location", "location_tag", "normalize_storage_type",
              "validate_cuda_device", "check_module_version_greater_or_equal",
              "register_package", "skip_data", "SourceChangeWarning", "StorageType",
              "DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION", "UNSAFE_MESSAGE",
              "STORAGE_KEY_SEPARATOR", "MAP_PRIVATE", "MAP_SHARED", "LONG_SIZE", "INT_SIZE",
              "SHORT_SIZE", "save", "load"}
    assert wanted <= public
    for n in wanted:
        assert hasattr(torchlike.serialization, n), n
    for n in ("DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION", "UNSAFE_MESSAGE",
              "STORAGE_KEY_SEPARATOR", "MAP_PRIVATE", "MAP_SHARED", "LONG_SIZE", "INT_SIZE",
              "SHORT_SIZE"):
        assert getattr(torchlike.serialization, n) == getattr(torch.serialization, n), n
    assert [e.name for e in tls.LoadEndianness] == [e.name for e in
                                                    torch.serialization.LoadEndianness]
    assert tls.get_crc32_options() is torch.serialization.get_crc32_options() is True
    assert tls.get_default_mmap_options() == torch.serialization.get_default_mmap_options()
    assert torchlike.serialization.check_module_version_greater_or_equal(np, (1, 0)) is True
    assert torch.serialization.check_module_version_greater_or_equal(np, (1, 0)) is True


def _np_scalar_globals():
    out = [np.dtype, type(np.dtype(np.float64))]
    core = getattr(np, "_core", None) or np.core
    return [core.multiarray.scalar] + out


@pytest.mark.parametrize("form", ["add", "context", "tuple"])
def test_safe_globals_let_weights_only_load_user_objects(clean_safe_globals, form):
    obj = {"p": Point(1, [2.5, "s"]), "s": Slotted(4), "n": np.float64(1.5),
           "w": torch.ones(2)}
    data = _torch_ckpt(obj)
    allow = [Point, Slotted] + _np_scalar_globals()
    if form == "tuple":
        allow = [(Point, f"{Point.__module__}.Point")] + allow[1:]
    got = {}
    for m, ser in ((torch, torch.serialization), (torchlike, tls)):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            m.load(io.BytesIO(data))
        unsafe = sorted(ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))
        got[m.__name__ + "_unsafe"] = unsafe
        if form == "context":
            with ser.safe_globals(allow):
                assert len(ser.get_safe_globals()) == len(allow)
                got[m.__name__] = m.load(io.BytesIO(data))
            assert ser.get_safe_globals() == []
            with pytest.raises(pickle.UnpicklingError):
                m.load(io.BytesIO(data))
        else:
            ser.add_safe_globals(allow)
            assert set(map(id, ser.get_safe_globals())) == set(map(id, allow))
            got[m.__name__] = m.load(io.BytesIO(data))
            assert sorted(ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == []
            ser.clear_safe_globals()
            assert ser.get_safe_globals() == []
    assert got["torch_unsafe"] == got["torchlike_unsafe"] and len(got["torch_unsafe"]) == 4
    ours, theirs = got["torchlike"], got["torch"]
    assert (ours["p"].x, ours["p"].y) == (theirs["p"].x, theirs["p"].y) == (1, [2.5, "s"])
    assert ours["s"].a == theirs["s"].a == 4
    assert type(ours["n"]) is type(theirs["n"]) is np.float64 and ours["n"] == 1.5
    _assert_same(ours["w"], theirs["w"])


def test_safe_globals_do_not_unblock_os(clean_safe_globals):
    data = _torch_ckpt({"x": _Evil()})
    for m, ser in ((torch, torch.serialization), (torchlike, tls)):
        ser.add_safe_globals([os.system])
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            m.load(io.BytesIO(data))


def test_safe_globals_bad_entries_raise_as_torch(clean_safe_globals):
    data = _torch_ckpt({"p": Point(1, 2)})
    for bad in ([(Point, "a", "b")], [(Point, 3)]):
        errs = []
        for m, ser in ((torch, torch.serialization), (torchlike, tls)):
            ser.add_safe_globals(bad)
            errs.append(_outcome(lambda: m.load(io.BytesIO(data)))[1])
            ser.clear_safe_globals()
        _same_class(errs[1], errs[0])
        assert str(errs[1]) == str(errs[0])


# ============================================================================ file objects
class _NoSeek(io.RawIOBase):
    def __init__(self, data):
        self.d = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        x = self.d.read(len(b))
        b[:len(x)] = x
        return len(x)

    def seekable(self):
        return False

    def seek(self, *a):
        raise io.UnsupportedOperation("seek")


class _WriteOnly:
    def __init__(self):
        self.b = bytearray()

    def write(self, d):
        self.b += d
        return len(d)

    def flush(self):
        pass


def test_file_like_objects_both_ways(tmp_path):
    data = _torch_ckpt(_payloads()["state"])
    # a checkpoint after other bytes in the same buffer, read from its position
    buf = io.BytesIO(b"junkjunk" + data)
    buf.seek(8)
    ours = torchlike.load(buf)
    buf.seek(8)
    _assert_same(ours, torch.load(buf))
    # a write-only stream (no seek/tell) receives a checkpoint torch reads
    w = _WriteOnly()
    torchlike.save({"w": torchlike.arange(5)}, w)
    assert torch.load(io.BytesIO(bytes(w.b)))["w"].tolist() == list(range(5))
    # an open binary file both ways
    p = tmp_path / "fh.pt"
    with open(p, "wb") as fh:
        torchlike.save({"w": torchlike.ones(3)}, fh)
    with open(p, "rb") as fh:
        assert torch.load(fh)["w"].tolist() == [1.0, 1.0, 1.0]
    with open(p, "rb") as fh:
        assert torchlike.load(fh)["w"].tolist() == [1.0, 1.0, 1.0]
    # refusals with torch's class and message
    for src in (lambda: _NoSeek(data), lambda: 3, lambda: b"abc"):
        _, te = _outcome(lambda: torch.load(src()))
        _, oe = _outcome(lambda: torchlike.load(src()))
        _same_class(oe, te)
        assert str(oe) == str(te)
    for src in (tmp_path / "missing.pt", tmp_path, str(tmp_path / "missing.pt")):
        _, te = _outcome(lambda: torch.load(src))
        _, oe = _outcome(lambda: torchlike.load(src))
        assert type(oe) is type(te) and str(oe) == str(te)
    for target in (3, b"bytes"):
        _, te = _outcome(lambda: torch.save({}, target))
        _, oe = _outcome(lambda: torchlike.save({}, target))
        _same_class(oe, te)
        assert str(oe) == str(te)
    with open(p, "r") as fh:                       # text mode: torch's decoding error
        _, te = _outcome(lambda: torch.load(fh))
    with open(p, "r") as fh:
        _, oe = _outcome(lambda: torchlike.load(fh))
    _same_class(oe, te)
    # mmap=True reads a path as torch does
    torch.save(_payloads()["i64_2d"], p)
    _assert_same(torchlike.load(p, mmap=True), torch.load(p, mmap=True))
    legacy = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(1)}, legacy, _use_new_zipfile_serialization=False)
    _, te = _outcome(lambda: torch.load(legacy, mmap=True))
    _, oe = _outcome(lambda: torchlike.load(legacy, mmap=True))
    _same_class(oe, te)
    assert str(oe) == str(te)


# ============================================================================ save: file semantics
def _save_both(tmp_path, prepare, check, obj=None):
    """Run the same file scenario for torch and torchlike in two folders; ``check`` returns a
    comparable description of the result."""
    out = {}
    for m in (torch, torchlike):
        d = tmp_path / m.__name__
        d.mkdir()
        target = prepare(d)
        payload = obj if obj is not None else {"w": m.arange(3.0)}
        res, err = _outcome(lambda: m.save(payload, target))
        out[m.__name__] = (check(d), None if err is None else
                           (type(err), str(err).replace(str(d), "<dir>")))
    assert out["torch"] == out["torchlike"], out
    return out["torch"]


def _mode(p):
    return oct(stat.S_IMODE(os.stat(p).st_mode))


def _listing(d):
    return sorted(os.listdir(d))


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0o027])
def test_new_file_honours_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        _save_both(tmp_path, lambda d: d / "new.pt", lambda d: (_mode(d / "new.pt"),
                                                                _listing(d)))
    finally:
        os.umask(old)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o604, 0o755, 0o666])
def test_existing_file_keeps_its_permissions(tmp_path, mode):
    def prep(d):
        p = d / "keep.pt"
        p.write_bytes(b"old")
        os.chmod(p, mode)
        return p
    res = _save_both(tmp_path, prep, lambda d: (_mode(d / "keep.pt"), _listing(d)))
    assert res[0][0] == oct(mode)


@pytest.mark.parametrize("kind", ["to_file", "dangling", "chain", "relative", "to_other_dir"])
def test_save_writes_through_symlinks(tmp_path, kind):
    def prep(d):
        (d / "sub").mkdir()
        real = d / ("sub" if kind == "to_other_dir" else ".") / "real.pt"
        if kind != "dangling":
            real.write_bytes(b"old")
            os.chmod(real, 0o640)
        if kind == "relative":
            os.symlink("real.pt", d / "link.pt")
        elif kind == "chain":
            os.symlink(real, d / "mid.pt")
            os.symlink(d / "mid.pt", d / "link.pt")
        else:
            os.symlink(real, d / "link.pt")
        return d / "link.pt"

    def check(d):
        real = d / ("sub" if kind == "to_other_dir" else ".") / "real.pt"
        loaded = torch.load(real)["w"].tolist()
        return (os.path.islink(d / "link.pt"), _mode(real), loaded, _listing(d),
                _listing(d / "sub"))
    res = _save_both(tmp_path, prep, check)
    assert res[0][0] is True and res[0][2] == [0.0, 1.0, 2.0]


def test_save_into_hard_linked_file_updates_every_name(tmp_path):
    def prep(d):
        p = d / "a.pt"
        p.write_bytes(b"old")
        os.link(p, d / "b.pt")
        return p
    res = _save_both(tmp_path, prep, lambda d: (torch.load(d / "b.pt")["w"].tolist(),
                                                os.stat(d / "a.pt").st_nlink, _listing(d)))
    assert res[0][0] == [0.0, 1.0, 2.0]


def test_save_refusals_as_torch(tmp_path):
    """A missing parent folder and a folder as the target: torch's RuntimeError and message."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _save_both(tmp_path / "a", lambda d: d / "nodir" / "f.pt", _listing)

    def prep_dir(d):
        (d / "adir").mkdir()
        return d / "adir"
    res = _save_both(tmp_path / "b", prep_dir, lambda d: _listing(d / "adir"))
    assert res[1][0] is RuntimeError


def _as_nobody(fn):
    """Run ``fn`` in a child process that is not root (read-only files are writable to
    root); returns its (error class name, message) or None."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # jax's fork warning
        pid = os.fork()
    if pid == 0:                                       # child: no jax work happens here
        try:
            signal.alarm(60)                           # never hang the suite
            os.close(r)
            if IS_ROOT:
                os.setgid(65534)
                os.setuid(65534)
            try:
                fn()
                msg = pickle.dumps(None)
            except BaseException as e:  # noqa: BLE001
                msg = pickle.dumps((type(e).__name__, str(e)))
            os.write(w, msg)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_read_only_target_refused_as_torch(tmp_path):
    import shutil
    import tempfile
    torch.save({}, io.BytesIO())                       # import torch's lazy modules first
    torchlike.save({}, io.BytesIO())
    results = {}
    top = tempfile.mkdtemp(dir="/tmp")                 # a folder the child can reach
    os.chmod(top, 0o777)
    try:
        for m in (torch, torchlike):
            d = os.path.join(top, m.__name__)
            os.mkdir(d)
            os.chmod(d, 0o777)
            ro = os.path.join(d, "ro.pt")
            with open(ro, "wb") as fh:
                fh.write(b"old")
            os.chmod(ro, 0o444)
            rodir = os.path.join(d, "rodir")
            os.mkdir(rodir)
            os.chmod(rodir, 0o555)
            inplace = os.path.join(d, "rodir_rwfile")
            os.mkdir(inplace)
            with open(os.path.join(inplace, "f.pt"), "wb") as fh:
                fh.write(b"old")
            os.chmod(os.path.join(inplace, "f.pt"), 0o666)
            os.chmod(inplace, 0o555)
            results[m.__name__] = (
                _as_nobody(lambda: m.save({"a": 1}, ro)),
                _as_nobody(lambda: m.save({"a": 1}, os.path.join(rodir, "new.pt"))),
                _as_nobody(lambda: m.save({"a": 1}, os.path.join(inplace, "f.pt"))),
                open(ro, "rb").read(), _listing(d), _listing(rodir), _listing(inplace))
            # written in place by both (the folder is read-only, the file is not)
            assert torch.load(os.path.join(inplace, "f.pt")) == {"a": 1}
    finally:
        for root, dirs, _ in os.walk(top):
            for x in dirs:
                os.chmod(os.path.join(root, x), 0o777)
        shutil.rmtree(top)
    assert results["torch"] == results["torchlike"], results
    assert results["torch"][0][0] == "RuntimeError" and results["torch"][3] == b"old"


class _Boom:
    def __init__(self, exc):
        self.exc = exc

    def __reduce__(self):
        raise self.exc


@pytest.mark.parametrize("exc", [ValueError("boom"), KeyboardInterrupt(), MemoryError()],
                         ids=["ValueError", "KeyboardInterrupt", "MemoryError"])
def test_interrupted_save_leaves_target_and_no_temporary_file(tmp_path, exc):
    """An exception while saving (KeyboardInterrupt included) propagates and removes the
    temporary file; the old checkpoint is intact (torch truncates it first)."""
    f = tmp_path / "ckpt.pt"
    torchlike.save({"w": torchlike.ones(2)}, f)
    before = f.read_bytes()
    with pytest.raises(type(exc)):
        torchlike.save({"w": torchlike.zeros(2), "bad": _Boom(exc)}, f)
    assert f.read_bytes() == before and _listing(tmp_path) == ["ckpt.pt"]
    g = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, g)
    with pytest.raises(type(exc)):
        torch.save({"w": torch.zeros(2), "bad": _Boom(exc)}, g)
    g.unlink()


def test_sigkill_during_save_keeps_old_checkpoint(tmp_path):
    """DIFFERENCES.md: a SIGKILL while saving leaves the old checkpoint intact plus the hidden
    temporary file ``.<name>.tmp-<pid>-<hex>`` in its folder; torch leaves a truncated file."""
    code = ("import os, signal, sys\n"
            "import {m} as t\n"
            "class K:\n"
            "    def __reduce__(self):\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "t.save({{'w': t.ones(1000), 'k': K()}}, sys.argv[1])\n")
    for m in ("torchlike", "torch"):
        d = tmp_path / m
        d.mkdir()
        f = d / "ckpt.pt"
        torch.save({"w": torch.arange(3.0)}, f)
        out = subprocess.run([sys.executable, "-c", code.format(m=m), str(f)],
                             capture_output=True, timeout=300)
        assert out.returncode == -signal.SIGKILL
        if m == "torchlike":
            assert torch.load(f)["w"].tolist() == [0.0, 1.0, 2.0]
            left = _listing(d)
            assert left[0] == ".ckpt.pt.tmp-" + left[0].split("-")[1] + "-" + \
                left[0].split("-")[2] and left[1:] == ["ckpt.pt"]
        else:
            with pytest.raises(Exception):
                torch.load(f)
