"""torch's small dtypes against real torch 2.13: the five float8 types (created, converted with
torch's saturating and NaN rules, printed, viewed, saved, and refused by the kernels torch does
not compile for them), and complex32, uint1..7, int1..7, bits*, float4_e2m1fn_x2 (dtype objects
with torch's attributes and promotion; jax has no arrays of them: DIFFERENCES.md)."""
import io
import pickle
import warnings

import numpy as np
import pytest

import torchlike

torch = pytest.importorskip("torch")

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e8m0fnu"]
UNBACKED = (["complex32", "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4",
             "bits4x2"] + [f"uint{i}" for i in range(1, 8)] + [f"int{i}" for i in range(1, 8)])
REGULAR = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
           "float32", "float64", "complex64", "complex128", "uint16", "uint32", "uint64"]


def outcome(f):
    """A comparable result: a value's repr (with its dtype), or the exception's class and
    message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
        except Exception as e:          # noqa: BLE001  (the class is what is compared)
            return type(e).__name__, str(e)
    return "ok", repr(r)


def both(f):
    return outcome(lambda: f(torch)), outcome(lambda: f(torchlike))


# ------------------------------------------------------------------ dtype objects

ATTRS = {
    "repr": lambda d: repr(d), "str": lambda d: str(d), "itemsize": lambda d: d.itemsize,
    "is_floating_point": lambda d: d.is_floating_point, "is_complex": lambda d: d.is_complex,
    "is_signed": lambda d: d.is_signed, "to_real": lambda d: d.to_real(),
    "to_complex": lambda d: d.to_complex(),
    "pickle": lambda d: pickle.loads(pickle.dumps(d)) is d,
}


@pytest.mark.parametrize("attr", sorted(ATTRS))
@pytest.mark.parametrize("name", FLOAT8 + UNBACKED)
def test_dtype_attributes(name, attr):
    t, o = both(lambda T: ATTRS[attr](getattr(T, name)))
    assert t == o


def test_aliases():
    assert torchlike.chalf is torchlike.complex32 and torch.chalf is torch.complex32
    assert torchlike.bit is torchlike.uint1 and repr(torch.bit) == repr(torchlike.bit)


@pytest.mark.parametrize("b", FLOAT8 + UNBACKED + REGULAR)
@pytest.mark.parametrize("a", FLOAT8 + UNBACKED)
def test_promote_types(a, b):
    t, o = both(lambda T: T.promote_types(getattr(T, a), getattr(T, b)))
    assert t == o
    t, o = both(lambda T: T.promote_types(getattr(T, b), getattr(T, a)))
    assert t == o


@pytest.mark.parametrize("name", FLOAT8 + UNBACKED)
def test_finfo_iinfo(name):
    fs = [lambda T: repr(T.finfo(getattr(T, name))), lambda T: T.iinfo(getattr(T, name))]
    fs += [lambda T, a=a: getattr(T.finfo(getattr(T, name)), a)
           for a in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype")]
    for f in fs:
        t, o = both(f)
        assert t == o


@pytest.mark.parametrize("name", UNBACKED)
def test_unbacked_dtypes_refuse_tensors(name):
    # DIFFERENCES.md "dtypes without jax arrays": torch makes (some) tensors of them
    for f in (lambda: torchlike.empty(2, dtype=getattr(torchlike, name)),
              lambda: torchlike.zeros(2, dtype=getattr(torchlike, name)),
              lambda: torchlike.ones(4, dtype=torchlike.uint8).view(getattr(torchlike, name))):
        with pytest.raises(NotImplementedError, match="jax has no"):
            f()
    assert "dtypes without jax arrays" in open(
        __file__.replace("tests/test_small_dtypes.py", "DIFFERENCES.md")).read()


# ------------------------------------------------------------------ float8 conversions

def _f32_samples():
    rng = np.random.default_rng(0)
    bits = np.concatenate([
        rng.integers(0, 2 ** 32, 50_000, dtype=np.uint64).astype(np.uint32),
        np.arange(0, 2 ** 32, 2 ** 16, dtype=np.uint64).astype(np.uint32),
        np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0, 0x80000000],
                 np.uint32)])
    return bits.view(np.float32)


def _as_bits(T, x):
    """A tensor's bytes as integers (NaN payloads and signs compared too)."""
    size = x.dtype.itemsize
    if x.dtype in (T.bool,) or not (x.dtype.is_floating_point or x.dtype.is_complex):
        return x.numpy()
    return x.view({1: T.uint8, 2: T.int16, 4: T.int32, 8: T.int64}[size]).numpy()


def _from(T, src, dtype):
    return T.from_numpy(src.copy()) if isinstance(src, np.ndarray) else src(T)


SOURCES = {
    "float32": lambda: _f32_samples(),
    "float64": lambda: np.concatenate([_f32_samples().astype(np.float64),
                                       np.array([1.0625 + 2 ** -40, 1.5 + 2 ** -30, 1e300,
                                                 -1e-300, 5.9e-39])]),
    "float16": lambda: np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).view(np.float16),
    "int64": lambda: np.array([0, 1, -7, 3, 448, 449, 1000, 100000, -100000, 2 ** 40 + 1,
                               -2 ** 63, 2 ** 63 - 1], np.int64),
    "bool": lambda: np.array([True, False]),
}


@pytest.mark.parametrize("interpret", [None, 0], ids=["interpreted", "compiled"])
@pytest.mark.parametrize("src", sorted(SOURCES))
@pytest.mark.parametrize("name", FLOAT8)
def test_conversion_to_float8(name, src, interpret):
    a = SOURCES[src]()
    want = torch.from_numpy(a.copy()).to(getattr(torch, name)).view(torch.uint8).numpy()
    x = torchlike.from_numpy(a.copy())
    if interpret is None:
        got = x.to(getattr(torchlike, name))
    else:
        with torchlike.eager.interpreting(interpret):
            got = x.to(getattr(torchlike, name))
    got = got.view(torchlike.uint8).numpy()
    bad = np.nonzero(want != got)[0]
    assert bad.size == 0, [(a[i], want[i], got[i]) for i in bad[:5]]


TARGETS = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
           "int64", "bool", "complex64"] + FLOAT8


@pytest.mark.parametrize("interpret", [None, 0], ids=["interpreted", "compiled"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", FLOAT8)
def test_conversion_from_float8(name, target, interpret):
    """Every one of the 256 values of each float8 type (NaNs and infs included) converted."""
    def run(T):
        x = T.from_numpy(np.arange(256, dtype=np.uint8)).view(getattr(T, name))
        y = x.to(getattr(T, target))
        if y.dtype.is_complex:
            y = T.view_as_real(y)
        return _as_bits(T, y)
    want = run(torch)
    if interpret is None:
        got = run(torchlike)
    else:
        with torchlike.eager.interpreting(interpret):
            got = run(torchlike)
    bad = np.nonzero((want != got).reshape(256, -1).any(1))[0]
    assert bad.size == 0, [(i, want[i], got[i]) for i in bad[:5]]


VALUES = [1000.0, 1e6, -1e6, float("inf"), float("nan"), -float("inf"), 0.3, -0.0, 1e-10,
          448.0, 464.0, 240.0, 57344.0, 61440.0, 3.0, -7.0]


@pytest.mark.parametrize("name", FLOAT8)
def test_tensor_from_python_values(name):
    # torch.tensor(list, dtype=) converts on the host, with the same rules as .to()
    t, o = both(lambda T: _as_bits(T, T.tensor(VALUES, dtype=getattr(T, name))).tolist())
    assert t == o
    t, o = both(lambda T: T.tensor(VALUES, dtype=getattr(T, name)).tolist())
    assert t == o


@pytest.mark.parametrize("numel", [1, 2])
@pytest.mark.parametrize("value", [0.0, -0.5, 3.0, 500.0, 1000.0, 1e40, 5.9e-39, float("inf"),
                                   -float("inf"), float("nan"), 7, -3])
@pytest.mark.parametrize("name", FLOAT8)
def test_full_checks_overflow(name, value, numel):
    # torch's checked scalar conversion (one-element tensors go through double)
    t, o = both(lambda T: _as_bits(T, T.full((numel,), value, dtype=getattr(T, name))).tolist())
    assert t == o


# ------------------------------------------------------------------ float8 tensors

def _x(T, name):
    return T.tensor([[1.0, -2.0], [0.5, 3.0]]).to(getattr(T, name))


def _y(T, name):
    return T.tensor([[1.0, 2.0], [4.0, 3.0]]).to(getattr(T, name))


def _setitem(T, x, y):
    x = x.clone()
    x[0] = y[1]
    return x


def _setitem_advanced(T, x, y):
    x = x.clone()
    x[x == y] = y[x == y]
    return x


def _view_grad(T, x, y):
    z = x.clone().requires_grad_()
    return z.t().requires_grad, z.t().grad_fn.name()


OPS = {
    # arithmetic torch refuses (or runs: tensor-tensor mul, abs, 2-d matmul)
    "add": lambda T, x, y: x + y, "sub": lambda T, x, y: x - y, "mul": lambda T, x, y: x * y,
    "mul_scalar": lambda T, x, y: x * 2, "div": lambda T, x, y: x / y, "neg": lambda T, x, y: -x,
    "abs": lambda T, x, y: x.abs(), "sign": lambda T, x, y: x.sign(),
    "pow": lambda T, x, y: x ** 2, "exp": lambda T, x, y: x.exp(),
    "sqrt": lambda T, x, y: x.sqrt(), "sin": lambda T, x, y: x.sin(),
    "relu": lambda T, x, y: T.relu(x), "sigmoid": lambda T, x, y: x.sigmoid(),
    "floor": lambda T, x, y: x.floor(), "round": lambda T, x, y: x.round(),
    "trunc": lambda T, x, y: x.trunc(), "reciprocal": lambda T, x, y: x.reciprocal(),
    "signbit": lambda T, x, y: x.signbit(), "nan_to_num": lambda T, x, y: x.nan_to_num(),
    "lerp": lambda T, x, y: x.lerp(y, 0.5), "addcmul": lambda T, x, y: x.addcmul(x, y),
    "fmod": lambda T, x, y: x.fmod(y), "atan2": lambda T, x, y: x.atan2(y),
    "bitwise_and": lambda T, x, y: x & y, "logical_not": lambda T, x, y: x.logical_not(),
    "maximum": lambda T, x, y: T.maximum(x, y), "clamp": lambda T, x, y: x.clamp(0, 1),
    "add_float32": lambda T, x, y: x + T.ones(2), "add_0dim": lambda T, x, y: x + T.tensor(1.0),
    "matmul": lambda T, x, y: x @ y, "dot": lambda T, x, y: x[0].dot(y[0]),
    "linear": lambda T, x, y: T.nn.functional.linear(x, y),
    "softmax": lambda T, x, y: x.softmax(0),
    # comparisons and tests
    "eq": lambda T, x, y: x == y, "ne": lambda T, x, y: x != y, "lt": lambda T, x, y: x < y,
    "ge": lambda T, x, y: x >= y, "eq_scalar": lambda T, x, y: x == 1,
    "isnan": lambda T, x, y: x.isnan(), "isinf": lambda T, x, y: x.isinf(),
    "isfinite": lambda T, x, y: x.isfinite(), "equal": lambda T, x, y: T.equal(x, y),
    "isclose": lambda T, x, y: T.isclose(x, y), "allclose": lambda T, x, y: T.allclose(x, y),
    # reductions and sorting
    "sum": lambda T, x, y: x.sum(), "sum_dim": lambda T, x, y: x.sum(0),
    "mean": lambda T, x, y: x.mean(), "prod": lambda T, x, y: x.prod(),
    "max": lambda T, x, y: x.max(), "max_dim": lambda T, x, y: x.max(0),
    "min": lambda T, x, y: x.min(), "argmax": lambda T, x, y: x.argmax(),
    "amax": lambda T, x, y: x.amax(0), "cumsum": lambda T, x, y: x.cumsum(0),
    "sort": lambda T, x, y: x.sort(), "topk": lambda T, x, y: x.topk(1),
    "all": lambda T, x, y: x.all(), "any": lambda T, x, y: x.any(),
    "nonzero": lambda T, x, y: x.nonzero(), "count_nonzero": lambda T, x, y: x.count_nonzero(),
    "std": lambda T, x, y: x.std(), "unique": lambda T, x, y: x.unique(),
    # views, copies, data movement
    "clone": lambda T, x, y: x.clone(), "contiguous": lambda T, x, y: x.t().contiguous(),
    "t": lambda T, x, y: x.t(), "permute": lambda T, x, y: x.permute(1, 0),
    "reshape": lambda T, x, y: x.reshape(4), "view": lambda T, x, y: x.view(4),
    "squeeze": lambda T, x, y: x.unsqueeze(0).squeeze(0),
    "expand": lambda T, x, y: x[:1].expand(3, 2), "select": lambda T, x, y: x[1],
    "slice": lambda T, x, y: x[:, 1:], "narrow": lambda T, x, y: x.narrow(1, 0, 1),
    "index_int": lambda T, x, y: x[T.tensor([1, 0])], "index_bool": lambda T, x, y: x[x == y],
    "setitem": _setitem, "setitem_advanced": _setitem_advanced,
    "index_put": lambda T, x, y: x.clone().index_put_((T.tensor([0]),),
                                                      T.ones(1, 2, dtype=x.dtype)),
    "cat": lambda T, x, y: T.cat([x, y]), "stack": lambda T, x, y: T.stack([x, y]),
    "split": lambda T, x, y: x.split(1), "unbind": lambda T, x, y: x.unbind(),
    "flip_rows": lambda T, x, y: x.flip(0), "flip_last": lambda T, x, y: x.flip(1),
    "rot90": lambda T, x, y: x.rot90(), "roll": lambda T, x, y: x.roll(1),
    "repeat": lambda T, x, y: x.repeat(2, 1), "tril": lambda T, x, y: x.tril(),
    "diagonal": lambda T, x, y: x.diagonal(), "unfold": lambda T, x, y: x.unfold(0, 1, 1),
    "as_strided": lambda T, x, y: x.as_strided((2,), (1,)),
    "gather": lambda T, x, y: x.gather(0, T.tensor([[0, 1]])),
    "index_select": lambda T, x, y: x.index_select(0, T.tensor([1])),
    "masked_select": lambda T, x, y: x.masked_select(x == y),
    "masked_fill": lambda T, x, y: x.masked_fill(x == y, 0.5),
    "take": lambda T, x, y: x.take(T.tensor([0, 3])),
    "where": lambda T, x, y: T.where(x == y, x, y),
    "pad": lambda T, x, y: T.nn.functional.pad(x, (1, 1)),
    "copy_": lambda T, x, y: x.clone().copy_(y), "copy_float32": lambda T, x, y:
    x.clone().copy_(T.ones(2, 2)), "fill_": lambda T, x, y: x.clone().fill_(2),
    "view_uint8": lambda T, x, y: x.view(T.uint8), "view_int16": lambda T, x, y: x.view(T.int16),
    "view_float32": lambda T, x, y: x.reshape(4).view(T.float32),
    "view_bool": lambda T, x, y: x.view(T.bool),
    "view_other_float8": lambda T, x, y: x.view(T.float8_e5m2),
    "uint8_view_as": lambda T, x, y: T.tensor([0, 1, 56, 127, 128, 255],
                                              dtype=T.uint8).view(x.dtype),
    # creation
    "ones_like": lambda T, x, y: T.ones_like(x), "full_like": lambda T, x, y: T.full_like(x, 2),
    "new_ones": lambda T, x, y: x.new_ones(3), "new_full": lambda T, x, y: x.new_full((2,), 4.0),
    "new_tensor": lambda T, x, y: x.new_tensor([1.0, 1000.0]),
    "zeros": lambda T, x, y: T.zeros(3, dtype=x.dtype).view(T.uint8),
    "empty_shape": lambda T, x, y: T.empty(2, 3, dtype=x.dtype).shape,
    "rand": lambda T, x, y: T.rand(2, dtype=x.dtype),
    "randn": lambda T, x, y: T.randn(2, dtype=x.dtype),
    "arange": lambda T, x, y: T.arange(3, dtype=x.dtype),
    "linspace": lambda T, x, y: T.linspace(0, 1, 3, dtype=x.dtype),
    # scalars and queries
    "item": lambda T, x, y: x[0, 0].item(), "tolist": lambda T, x, y: x.tolist(),
    "float": lambda T, x, y: float(x[1, 1]), "int": lambda T, x, y: int(x[1, 1]),
    "result_type": lambda T, x, y: T.result_type(x, 1.0),
    "result_type_tensor": lambda T, x, y: T.result_type(x, T.ones(1)),
    "is_floating_point": lambda T, x, y: x.is_floating_point(),
    "is_signed": lambda T, x, y: x.is_signed(), "element_size": lambda T, x, y: x.element_size(),
    "nbytes": lambda T, x, y: x.nbytes, "requires_grad": lambda T, x, y: x.clone().requires_grad_(),
    "view_grad": _view_grad,
}

# zero fills: float8_e8m0fnu has no zero, and torch writes its zero byte (2**-127), not the
# conversion of 0 (NaN)
OPS_ZERO_FILLS = {
    "zero_": lambda T, x, y: x.clone().zero_(), "zeros_like": lambda T, x, y: T.zeros_like(x),
    "eye": lambda T, x, y: T.eye(2, dtype=x.dtype), "diag_embed": lambda T, x, y: x.diag_embed(),
}


@pytest.mark.parametrize("op", sorted(OPS) + sorted(OPS_ZERO_FILLS))
@pytest.mark.parametrize("name", FLOAT8)
def test_float8_ops_match_torch(name, op):
    f = OPS.get(op) or OPS_ZERO_FILLS[op]
    t, o = both(lambda T: f(T, _x(T, name), _y(T, name)))
    assert t == o


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_mul_and_matmul_values(name):
    """torch's float8 products round once from float32: every pair of a grid of values."""
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 256, (16, 16), dtype=np.uint8)
    other = rng.integers(0, 256, (16, 16), dtype=np.uint8)

    def run(T):
        a = T.from_numpy(bits.copy()).view(getattr(T, name))
        b = T.from_numpy(other.copy()).view(getattr(T, name))
        out = [(a * b).view(T.uint8).numpy()]
        if name != "float8_e8m0fnu":
            out.append((a @ b).float().numpy())
        return out
    for w, g in zip(run(torch), run(torchlike)):
        w, g = np.asarray(w), np.asarray(g)
        if w.dtype == np.uint8:
            # NaN bytes: torch's and XLA's may differ in payload; compare as values
            wv = torch.from_numpy(w).view(getattr(torch, name)).float().numpy()
            gv = torch.from_numpy(g).view(getattr(torch, name)).float().numpy()
            np.testing.assert_array_equal(wv, gv)
        else:
            np.testing.assert_allclose(w, g, rtol=0.07, equal_nan=True)


REPRS = [[1000.0, 1e6, -1e6, float("inf"), float("nan"), -float("inf"), 0.3, -0.0, 1e-10],
         [1.0, 2.0, 3.0], [0.25, 0.5], [1e-10, 0.0], [3.0, 0.5], [1024.0, 1048576.0, 0.25],
         [[1.0, -2.0], [0.5, 3.0]], [448.0] * 30]


@pytest.mark.parametrize("i", range(len(REPRS)))
@pytest.mark.parametrize("name", FLOAT8)
def test_float8_repr(name, i):
    t, o = both(lambda T: repr(T.tensor(REPRS[i]).to(getattr(T, name))))
    assert t == o
    t, o = both(lambda T: repr(T.zeros(2, dtype=getattr(T, name))))
    assert t == o
    t, o = both(lambda T: str(T.tensor(REPRS[i], dtype=getattr(T, name))[..., :1]))
    assert t == o


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_save_load_round_trip(name):
    vals = [[1.0, -2.0, 448.0], [0.1, 3.0, 0.5]]
    x = torchlike.tensor(vals).to(getattr(torchlike, name)).t()
    buf = io.BytesIO()
    torchlike.save({"x": x}, buf)
    buf.seek(0)
    t = torch.load(buf)["x"]
    want = torch.tensor(vals).to(getattr(torch, name)).t()
    assert t.dtype == want.dtype and torch.equal(t.view(torch.uint8), want.view(torch.uint8))
    buf = io.BytesIO()
    torch.save({"x": want}, buf)
    for weights_only in (True, False):
        buf.seek(0)
        got = torchlike.load(buf, weights_only=weights_only)["x"]
        assert got.dtype is getattr(torchlike, name)
        assert got.view(torchlike.uint8).tolist() == want.view(torch.uint8).tolist()
        assert repr(got) == repr(want)


def test_float8_product_has_no_grad_fn():
    # DIFFERENCES.md "float8 products record no autograd node": torch records MulBackward0
    x = torchlike.tensor([1.0, 2.0]).to(torchlike.float8_e4m3fn).requires_grad_()
    assert (x * x).grad_fn is None
    tx = torch.tensor([1.0, 2.0]).to(torch.float8_e4m3fn).requires_grad_()
    assert (tx * tx).grad_fn is not None
    assert (x * x).tolist() == (tx * tx).tolist()


@pytest.mark.parametrize("layout", ["t", "permute", "slice"])
def test_saved_strided_tensors_load_in_torch(layout):
    """A transposed or permuted tensor is saved with its strides over storage in stride order
    (a strided slice as a contiguous copy): torch reads the same values."""
    def make(T):
        x = T.arange(24.0).reshape(2, 3, 4)
        return {"t": x[0].t(), "permute": x.permute(2, 0, 1), "slice": x[:, 1]}[layout]
    buf = io.BytesIO()
    torchlike.save(make(torchlike), buf)
    buf.seek(0)
    got = torch.load(buf)
    want = make(torch)
    assert torch.equal(got, want)
    if layout != "slice":
        assert got.stride() == want.stride()


@pytest.mark.parametrize("name", ["bfloat16", *FLOAT8])
def test_numpy_of_a_type_numpy_lacks_raises_torchs_error(name):
    """``Tensor.numpy()`` (with ``force=True`` too) refuses bfloat16 and the float8 types, as
    torch does; ``np.asarray`` gives ml_dtypes' array (DIFFERENCES.md)."""
    def run(T, force):
        t = T.zeros(2, dtype=getattr(T, name))
        try:
            t.numpy(force=force)
        except TypeError as e:
            return str(e)
        return None
    for force in (False, True):
        assert run(torchlike, force) == run(torch, force) is not None
    assert np.asarray(torchlike.ones(2, dtype=getattr(torchlike, name))).dtype.name == name
