"""Core Tensor behaviour against torch: creation and dtype inference, repr, errors, metadata,
and the registry's trace counts."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import torchlike
from oracle import check_raises

ROOT = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------ creation and dtypes

CREATIONS = {
    "float_list": lambda m: m.tensor([1.0, 2.0]),
    "int_list": lambda m: m.tensor([1, 2]),
    "bool_list": lambda m: m.tensor([True, False]),
    "mixed_int_float": lambda m: m.tensor([1, 2.5]),
    "nested": lambda m: m.tensor([[1, 2], [3, 4]]),
    "scalar_float": lambda m: m.tensor(3.5),
    "scalar_int": lambda m: m.tensor(7),
    "complex": lambda m: m.tensor([1 + 2j, 3.0]),
    "numpy_f64": lambda m: m.tensor(np.array([1.0, 2.0])),
    "numpy_i32": lambda m: m.from_numpy(np.array([1, 2], np.int32)),
    "explicit_dtype": lambda m: m.tensor([1, 2], dtype=m.float64),
    "as_tensor": lambda m: m.as_tensor([1.5, 2.5]),
    "zeros": lambda m: m.zeros(2, 3),
    "zeros_tuple": lambda m: m.zeros((2, 3), dtype=m.int32),
    "ones": lambda m: m.ones(3),
    "full_int": lambda m: m.full((2,), 7),
    "full_float": lambda m: m.full((2, 2), 1.5),
    "full_bool": lambda m: m.full((2,), True),
    "empty": lambda m: m.empty(0),
    "arange_int": lambda m: m.arange(5),
    "arange_float": lambda m: m.arange(0, 1, 0.25),
    "arange_start_end": lambda m: m.arange(2, 9, 3),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 3),
    "zeros_like": lambda m: m.zeros_like(m.tensor([1, 2])),
    "ones_like_dtype": lambda m: m.ones_like(m.tensor([1, 2]), dtype=m.float16),
    "full_like": lambda m: m.full_like(m.tensor([1.0, 2.0]), 3),
    "legacy_Tensor": lambda m: m.Tensor([1, 2]),
    "bf16": lambda m: m.tensor([1.5, -2.25], dtype=m.bfloat16),
    "f16": lambda m: m.tensor([1.5, -2.25], dtype=m.half),
    "u8": lambda m: m.tensor([1, 255], dtype=m.uint8),
    "i8": lambda m: m.tensor([1, -5], dtype=m.int8),
    "i16": lambda m: m.tensor([1, -5], dtype=m.int16),
    "c64": lambda m: m.tensor([1 + 1j], dtype=m.complex64),
}


@pytest.mark.parametrize("name", CREATIONS)
def test_creation_matches_torch(name):
    t = CREATIONS[name](torch)
    ours = CREATIONS[name](torchlike)
    assert repr(ours) == repr(t)
    assert str(ours.dtype) == str(t.dtype)
    assert ours.shape == tuple(t.shape)


def test_default_dtype_switch():
    try:
        torchlike.set_default_dtype(torchlike.float64)
        torch.set_default_dtype(torch.float64)
        for f in (lambda m: m.tensor([1.5]), lambda m: m.zeros(2),
                  lambda m: m.tensor([1.5], dtype=m.float32), lambda m: m.tensor([1, 2]) + 0.5,
                  lambda m: m.arange(0.0, 1.0, 0.5)):
            assert repr(f(torchlike)) == repr(f(torch))
        assert torchlike.get_default_dtype() is torchlike.float64
    finally:
        torchlike.set_default_dtype(torchlike.float32)
        torch.set_default_dtype(torch.float32)
    assert torchlike.get_default_dtype() is torchlike.float32


def test_dtype_objects_and_aliases():
    assert torchlike.float is torchlike.float32 and torchlike.long is torchlike.int64
    assert torchlike.double is torchlike.float64 and torchlike.half is torchlike.float16
    assert repr(torchlike.float32) == repr(torch.float32) == "torch.float32"
    for a in ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32",
              "int64", "bool", "complex64"):
        for b in ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16",
                  "int32", "int64", "bool", "complex64"):
            ours = torchlike.promote_types(getattr(torchlike, a), getattr(torchlike, b))
            assert str(ours) == str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


def test_random_creation_shapes_dtypes_and_seed():
    torchlike.manual_seed(0)
    a = torchlike.rand(3, 4)
    b = torchlike.randn(2, dtype=torchlike.float64)
    c = torchlike.randint(0, 10, (5,))
    torchlike.manual_seed(0)
    a2 = torchlike.rand(3, 4)
    assert a.shape == (3, 4) and a.dtype is torchlike.float32
    assert b.dtype is torchlike.float64 and c.dtype is torchlike.int64
    assert np.array_equal(a.numpy(), a2.numpy())
    assert (a.numpy() >= 0).all() and (a.numpy() < 1).all()
    assert ((c.numpy() >= 0) & (c.numpy() < 10)).all()
    big = torchlike.randn(20000).numpy()
    assert abs(big.mean()) < 0.05 and abs(big.std() - 1) < 0.05


# ------------------------------------------------------------------ repr

REPRS = {
    "floats": lambda m: m.tensor([1.0, 2.5, -3.25]),
    "ints": lambda m: m.tensor([1, -20, 300]),
    "bools": lambda m: m.tensor([True, False]),
    "scalar": lambda m: m.tensor(3.14159),
    "int_valued_floats": lambda m: m.tensor([4.0, 8.0, 12.0]),
    "2d": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.5]]),
    "3d": lambda m: m.arange(24).reshape(2, 3, 4),
    "sci_large": lambda m: m.tensor([1e10, 1.0]),
    "sci_small": lambda m: m.tensor([1e-5, 1.0]),
    "nonfinite": lambda m: m.tensor([float("inf"), float("nan"), 1.0, -float("inf")]),
    "neg_zero": lambda m: m.tensor([-0.0, 0.0]),
    "requires_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "grad_fn": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "float64": lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    "int32": lambda m: m.tensor([1, 2], dtype=m.int32),
    "long_summarized": lambda m: m.arange(2000),
    "summarized_2d": lambda m: m.arange(3000.0).reshape(100, 30),
    "wide_wraps": lambda m: m.arange(40.0) / 3,
    "empty_2d": lambda m: m.zeros(0, 3),
    "empty_int": lambda m: m.tensor([], dtype=m.int64),
    "complex": lambda m: m.tensor([1 + 2j, -3.5 - 1j]),
    "bf16": lambda m: m.tensor([0.1, 2.0], dtype=m.bfloat16),
    "f16_grad": lambda m: m.tensor([0.1, 2.0], dtype=m.float16, requires_grad=True),
    "size": lambda m: m.zeros(2, 3).shape,
    "item_type": lambda m: type(m.tensor([2.5]).item()),
    "tolist": lambda m: m.tensor([[1, 2], [3, 4]]).tolist(),
    "f_string": lambda m: f"{m.tensor(2.5):.2f}",
    "parameter": lambda m: m.nn.Parameter(m.tensor([1.0, 2.0])),
}


@pytest.mark.parametrize("name", REPRS)
def test_repr_matches_torch(name):
    assert repr(REPRS[name](torchlike)) == repr(REPRS[name](torch))
    assert str(REPRS[name](torchlike)) == str(REPRS[name](torch))


# ------------------------------------------------------------------ metadata

def test_metadata():
    for m in (torch, torchlike):
        t = m.zeros(2, 3, 4)
        assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
        assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and len(t) == 2
        assert str(t.device) == "cpu" and t.is_leaf and not t.requires_grad
        assert t.stride() == (12, 4, 1)
    assert repr(torchlike.zeros(1).device) == repr(torch.zeros(1).device)


def test_numpy_roundtrip_and_no_torch_import():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torchlike.from_numpy(a)
    assert np.array_equal(t.numpy(), a) and t.dtype is torchlike.float32
    # torch.tensor copies (as torch does); from_numpy copies too (documented difference)
    c = torchlike.tensor(a)
    a[0, 0] = 100.0
    assert c[0, 0].item() == 0.0 and t[0, 0].item() == 0.0
    out = t.numpy()
    out[0, 1] = -1.0
    assert t[0, 1].item() == 1.0
    code = "import sys, torchlike; assert 'torch' not in sys.modules; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


# ------------------------------------------------------------------ errors

F = np.ones(3, np.float32)
F2 = np.ones((2, 3), np.float32)

ERRORS = [
    (lambda m, a: a.item(), (F,), "a Tensor with 3 elements cannot be converted to Scalar"),
    (lambda m, a, b: a + b, (F, np.ones(4, np.float32)),
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    (lambda m, a, b: a * b, (F2, np.ones((3, 2), np.float32)), "must match the size"),
    (lambda m, a, b: a @ b, (F2, F2), "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    (lambda m, a, b: a @ b, (F, np.ones(4, np.float32)), "inconsistent tensor size"),
    (lambda m, a: a.reshape(4), (F,), "shape '[4]' is invalid for input of size 3"),
    (lambda m, a: a.sum(2), (F,), "Dimension out of range"),
    (lambda m, a: a.transpose(0, 3), (F2,), "Dimension out of range"),
    (lambda m, a: a[3], (F,), "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda m, a: a[0, 0], (F,), "too many indices for tensor of dimension 1"),
    (lambda m, a: a.mean(), (np.array([1, 2]),), "mean(): could not infer output dtype"),
    (lambda m, a: m.tensor([1, 2]).requires_grad_(), (F,),
     "only Tensors of floating point dtype can require gradients"),
    (lambda m, a: (m.tensor([1.0], requires_grad=True) * 2).requires_grad_(False), (F,),
     "you can only change requires_grad flags of leaf variables."),
    (lambda m, a: a.sum().backward(), (F,),
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    (lambda m, a: (m.tensor([1.0, 2.0], requires_grad=True) * 2).backward(), (F,),
     "grad can be implicitly created only for scalar outputs"),
    (lambda m, a: m.tensor([1.0, 2.0]).retain_grad(), (F,),
     "can't retain_grad on Tensor that has requires_grad=False"),
    (lambda m, a: (m.tensor([1.0], requires_grad=True) * 2).register_post_accumulate_grad_hook(
        lambda t: None), (F,), "post accumulate grad hooks cannot be registered on non-leaf"),
    (lambda m, a: m.tensor([1.0, 2.0], requires_grad=True).numpy(), (F,),
     "Can't call numpy() on Tensor that requires grad."),
    (lambda m, a: __import__("numpy").asarray(m.tensor([1.0, 2.0], requires_grad=True)), (F,),
     "Can't call numpy() on Tensor that requires grad."),
    (lambda m, a: m.tensor([1.0]).requires_grad_(1), (F,),
     "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not int"),
    (lambda m, a: setattr(m.tensor([1.0]), "requires_grad", 1), (F,),
     "requires_grad must be a bool"),
    (lambda m, a: m.tensor([1.0, 2.0], requires_grad=True).add_(1), (F,),
     "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda m, a: m.tensor([1, 2]).add_(1.5), (F,),
     "result type Float can't be cast to the desired output type Long"),
    (lambda m, a: m.autograd.grad((m.tensor([1.0], requires_grad=True) * 2).sum(),
                                  m.tensor([1.0], requires_grad=True)), (F,),
     "The differentiated Tensor at index 0 appears to not have been used in the graph. "
     "Set allow_unused=True if this is the desired behavior."),
    (lambda m, a: bool(a), (F,), "Boolean value of Tensor with more than one value is ambiguous"),
    (lambda m, a: a.view(-1, -1), (F,), "only one dimension can be inferred"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_error_matches_torch(i):
    fn, inputs, fragment = ERRORS[i]
    check_raises(fn, *inputs, match=fragment)


def _numpy_of_grad_requiring(m):
    """``numpy()`` / ``np.asarray`` of a tensor that requires grad: refused in grad mode only
    (botorch's fit reads its parameters under ``no_grad``)."""
    import numpy as np
    p = m.nn.Parameter(m.ones(1, 2, dtype=m.float64))
    out = []
    for ctx in (m.no_grad, m.inference_mode, m.enable_grad):
        with ctx():
            try:
                out.append((p.numpy().tolist(), p.view(-1).numpy().tolist(),
                            np.asarray(p * 2).tolist()))
            except RuntimeError as e:
                out.append(str(e))
    return out


def test_numpy_of_a_tensor_requiring_grad_under_no_grad_as_torch():
    assert _numpy_of_grad_requiring(torchlike) == _numpy_of_grad_requiring(torch)


def test_backward_twice_raises_torch_error():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    lerr, terr = check_raises(lambda m, a: run(m), F,
                              match="Trying to backward through the graph a second time")
    assert str(lerr) == str(terr)


def test_hook_returning_wrong_shape_raises():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: m.ones(3))
        (x * 2).sum().backward()
    check_raises(lambda m, a: run(m), F, match="has changed the size of value")


# ------------------------------------------------------------------ registry caches

def test_same_op_same_shapes_traces_once(monkeypatch):
    """Each op's own jitted functions (strict eager: in fused mode ops run inside segment
    programs, pinned in tests/test_fused_eager.py)."""
    with torchlike.eager.strict():
        _same_op_same_shapes_traces_once(monkeypatch)


def _same_op_same_shapes_traces_once(monkeypatch):
    from torchlike import _registry as R
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)   # jit's own caching, no interpreter
    R.clear_caches()
    for _ in range(5):
        x = torchlike.tensor(np.random.rand(3, 4).astype(np.float32), requires_grad=True)
        y = torchlike.tensor(np.random.rand(3, 4).astype(np.float32), requires_grad=True)
        (x * y).sum().backward()
        with torchlike.no_grad():
            x * y
    assert R.trace_counts("mul") == {"fwd": 1, "fwd_vjp": 1, "bwd": 1}
    assert R.trace_counts("sum") == {"fwd": 0, "fwd_vjp": 1, "bwd": 1}
    # scalar operands are traced arguments: a new value does not re-trace
    for k in range(5):
        (x * float(k)).sum().backward()
    assert R.trace_counts("mul")["fwd_vjp"] == 2
    # a new shape traces again, once
    for _ in range(3):
        z = torchlike.ones(7, requires_grad=True)
        (z * z).sum().backward()
    assert R.trace_counts("mul")["fwd_vjp"] == 3


def test_no_node_recorded_without_grad():
    x = torchlike.ones(3, requires_grad=True)
    with torchlike.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    z = torchlike.ones(3) * 2
    assert z.grad_fn is None
    assert (x > 0).grad_fn is None  # comparisons are not differentiable


# ------------------------------------------------------------------ examples

SEEDS = ["seed1_gradient_hook", "seed2_modify_grad", "seed3_debug_linear",
         "seed4_remove_hook", "seed5_grad_norms"]


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("name", SEEDS)
def test_seed_example_prints_what_torch_prints(name):
    src = (ROOT / "examples" / f"{name}.py").read_text()
    assert "import torchlike as torch" in src
    ours = _run(src)
    theirs = _run(src.replace("import torchlike as torch", "import torch"))
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    if name == "seed3_debug_linear":
        # the value is the Linear layer's random weight: check the format and the identity
        probe = src + "\nprint(repr(model.weight.detach()))\n"
        ours = _run(probe).stdout.splitlines()
        assert ours[0].startswith("Intermediate gradient: tensor([[")
        assert ours[0].split(": ", 1)[1] == ours[1]
        return
    assert ours.stdout == theirs.stdout


def test_data_assignment_shares_the_sources_later_writes():
    """``t.data = other`` gives ``t`` ``other``'s values, shape, dtype and strides and from then
    on its storage: a later in-place write into either is seen by the other, as in torch
    (tests/test_inplace_aliasing.py sweeps the forms against torch)."""
    t = torchlike.zeros(3)
    other = torchlike.ones(3)
    t.data = other
    assert t.tolist() == [1.0, 1.0, 1.0]
    other.add_(1)
    assert t.tolist() == [2.0, 2.0, 2.0]
    t.mul_(5)
    assert other.tolist() == [10.0, 10.0, 10.0]
