"""Against torch 2.13: masked_scatter's shape/dtype errors (order of the two sizes, the
in-place form's expand error, legacy dtype names), expand's type name, LinAlgError's class,
embedding_bag's out-of-range index errors, Tensor.set_, data_ptr / untyped_storage, and
channels_last gradients and optimizer state."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape), r.tolist()


# ------------------------------------------------------------------ masked_scatter

_MS_SHAPES = [(4,), (3,), (4, 3), (2, 1), (1, 3), (2, 3, 1), (5, 2, 3), (2, 2), (2, 3)]
_MS_DTYPES = [("bool", "float32"), ("uint8", "float32"), ("bool", "float64"),
              ("uint8", "float64"), ("float32", "float32"), ("int64", "float32")]


@pytest.mark.parametrize("form", ["method", "inplace", "toplevel"])
@pytest.mark.parametrize("mshape", _MS_SHAPES, ids=str)
@pytest.mark.parametrize("dts", _MS_DTYPES, ids=str)
def test_masked_scatter_errors_as_torch(form, mshape, dts):
    def run(m):
        x = m.zeros(2, 3)
        mask = m.ones(*mshape, dtype=getattr(m, dts[0]))
        src = m.arange(100, dtype=getattr(m, dts[1]))
        if form == "method":
            return x.masked_scatter(mask, src)
        if form == "inplace":
            return x.clone().masked_scatter_(mask, src)
        return m.masked_scatter(x, mask, src)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("inplace", [False, True])
def test_masked_scatter_too_few_source_elements(inplace):
    def run(m):
        x = m.zeros(2, 3)
        mask = m.ones(2, 3, dtype=m.bool)
        return (x.masked_scatter_ if inplace else x.masked_scatter)(mask, m.zeros(4))
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


def test_masked_scatter_uint8_mask_warns_as_torch():
    for m in (torch, torchlike):
        with pytest.warns(UserWarning, match="received a mask with dtype torch.uint8"):
            with pytest.raises(RuntimeError, match="dtype Byte"):
                m.zeros(2, 3).masked_scatter_(m.ones(2, 3, dtype=m.uint8), m.zeros(6))


@pytest.mark.parametrize("dt", ["bool", "float32", "float64", "int64", "int32", "int16", "int8",
                                "float16", "bfloat16", "uint8", "complex64", "complex128"])
def test_expand_too_few_sizes_names_the_type_as_torch(dt):
    def run(m):
        return m.ones(2, 3, dtype=getattr(m, dt)).expand(3)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


# ------------------------------------------------------------------ LinAlgError

def test_linalg_error_class_as_torch():
    for m in (torch, torchlike):
        E = m.linalg.LinAlgError
        assert E.__name__ == E.__qualname__ == "_LinAlgError"
        assert issubclass(E, RuntimeError)
    assert torch.linalg.LinAlgError is torch._C._LinAlgError


@pytest.mark.parametrize("case", ["inv", "solve", "cholesky", "inv_ex"])
def test_linalg_error_is_caught_and_named_as_torch(case):
    def run(m):
        z, n = m.zeros(2, 2), -m.eye(2)
        f = {"inv": lambda: m.linalg.inv(z), "solve": lambda: m.linalg.solve(z, m.ones(2)),
             "cholesky": lambda: m.linalg.cholesky(n),
             "inv_ex": lambda: m.linalg.inv_ex(z, check_errors=True)}[case]
        try:
            f()
        except m.linalg.LinAlgError as e:
            return type(e).__name__, str(e)
        return None
    assert run(torchlike) == run(torch)


def test_linalg_error_pickles():
    import pickle
    E = torchlike.linalg.LinAlgError
    assert type(pickle.loads(pickle.dumps(E("x")))) is E


# ------------------------------------------------------------------ embedding_bag out of range

_EB_CASES = [([1, 7, 2], [0, 1]), ([7, 1, 2], [0, 1]), ([1, 2, 7], [0, 1]), ([1, 2, 7], [0, 2]),
             ([1, 2, 3, 7], [0, 2]), ([1, 7, 2], [0]), ([1, 7], [0, 1]), ([7], [0]),
             ([1, -1], [0]), ([1, 2, -3], [0, 1]), ([1, 2, 7], [0, 0, 2]),
             ([1, 2, 3, 4, 7, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7]),
             ([[1, 7], [2, 3]], None), ([[7, 1], [2, 3]], None), ([[1, 2], [3, 7]], None)]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
@pytest.mark.parametrize("case", _EB_CASES, ids=str)
def test_embedding_bag_out_of_range_index_as_torch(case, dt, mode, threads):
    def run(m):
        idx, off = case
        w = m.ones(5, 3, dtype=getattr(m, dt))
        old = m.get_num_threads()
        m.set_num_threads(threads)
        try:
            return m.nn.functional.embedding_bag(
                m.tensor(idx), w, None if off is None else m.tensor(off), mode=mode)
        finally:
            m.set_num_threads(old)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("kw", ["padding_idx", "per_sample_weights", "include_last_offset"])
def test_embedding_bag_out_of_range_index_options_as_torch(kw):
    def run(m, idx):
        extra = {"padding_idx": {"padding_idx": 1},
                 "per_sample_weights": {"per_sample_weights": m.ones(3)},
                 "include_last_offset": {"include_last_offset": True}}[kw]
        off = [0, 1, 3] if kw == "include_last_offset" else [0, 1]
        return m.nn.functional.embedding_bag(m.tensor(idx), m.ones(5, 3), m.tensor(off),
                                             mode="sum", **extra)
    for idx in ([1, 7, 2], [7, 1, 2]):
        assert _outcome(lambda: run(torchlike, idx)) == _outcome(lambda: run(torch, idx))


# ------------------------------------------------------------------ Tensor.set_

def _set_story(m):
    out = []
    x = m.zeros(3)
    y = m.arange(6.).reshape(2, 3).t()
    v = x[1:]
    r = x.set_(y)
    out.append((r is x, tuple(x.shape), x.stride(), x.storage_offset(), x._version, y._version,
                x.is_set_to(y), y.is_set_to(x)))
    y.add_(1)
    out.append((x.tolist(), x._version, y._version))
    x.mul_(2)
    out.append((y.tolist(), x._version, y._version, v.tolist(), v._version))
    v.fill_(5)
    out.append((y.tolist(), v.tolist()))
    out.append(x.data_ptr() == y.data_ptr())
    x.set_()
    out.append((tuple(x.shape), x.stride(), x._version, x.untyped_storage().nbytes(),
                x.data_ptr()))
    return out


def test_set_shares_storage_sizes_and_strides_as_torch():
    assert _set_story(torchlike) == _set_story(torch)


def _set_views_story(m):
    out = []
    base = m.arange(12.).reshape(3, 4)
    t = m.zeros(1)
    t.set_(base[1])
    t[0] = 100
    base[1, 3] = -1
    out.append((base.tolist(), t.tolist(), t.storage_offset(), t.stride(),
                t.data_ptr() - base.data_ptr()))
    u = t[1:3]
    u.fill_(7)
    out.append((base.tolist(), u.data_ptr() - base.data_ptr()))
    s = m.arange(5.)
    s.set_(s[2:])
    s[0] = 9
    out.append((s.tolist(), s.storage_offset()))
    cl = m.zeros(2, 3, 4, 5).to(memory_format=m.channels_last)
    q = m.zeros(1)
    q.set_(cl)
    out.append((q.stride(), q.is_contiguous(memory_format=m.channels_last)))
    yy = m.arange(6.)
    q.set_(yy, 2, (2, 2), (1, 2))
    yy[3] = -5
    out.append((q.tolist(), q.stride(), q.storage_offset()))
    q = m.zeros(4)[::2]
    q.set_(m.arange(12.), 1, (2,))
    out.append((q.tolist(), q.stride()))
    q = m.zeros(2, 3).t()
    q.set_(m.arange(12.), 1, (2, 3))
    out.append((q.tolist(), q.stride()))
    st = m.arange(6.).untyped_storage()
    q = m.zeros(2)
    q.set_(st)
    out.append((q.tolist(), q.stride()))
    q.set_(st, 1, (2,), (2,))
    out.append((q.tolist(), q.storage_offset()))
    return out


def test_set_views_offsets_and_storages_as_torch():
    assert _set_views_story(torchlike) == _set_views_story(torch)


def _set_autograd(m, case):
    try:
        if case == "leaf":
            m.zeros(3, requires_grad=True).set_(m.ones(3))
        elif case == "leaf_empty":
            m.zeros(3, requires_grad=True).set_()
        elif case == "leaf_no_grad":
            w = m.zeros(3, requires_grad=True)
            with m.no_grad():
                w.set_(m.ones(2))
            return w.tolist(), w.requires_grad, w.is_leaf
        elif case == "nonleaf":
            a = m.zeros(3, requires_grad=True) * 1
            a.set_(m.ones(3))
            assert a.grad_fn is not None and a.requires_grad
            a.sum().backward()
        elif case == "source_requires_grad":
            d = m.zeros(3)
            e = m.ones(3, requires_grad=True)
            d.set_(e)
            assert d.requires_grad and not d.is_leaf
            d.sum().backward()
        elif case == "source_history":
            b = m.ones(3, requires_grad=True)
            c = m.zeros(3)
            c.set_(b * 2)
            c.sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok"


@pytest.mark.parametrize("case", ["leaf", "leaf_empty", "leaf_no_grad", "nonleaf",
                                  "source_requires_grad", "source_history"])
def test_set_autograd_rules_as_torch(case):
    assert _set_autograd(torchlike, case) == _set_autograd(torch, case)


@pytest.mark.parametrize("dt", ["float64", "int64", "int32", "int16", "int8", "uint8", "bool",
                                "float16", "bfloat16", "complex64"])
def test_set_dtype_mismatch_as_torch(dt):
    def run(m):
        return m.zeros(3).set_(m.zeros(3, dtype=getattr(m, dt)))
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


def test_set_refuses_what_it_cannot_do_exactly():
    st = torchlike.arange(6.).untyped_storage()
    with pytest.raises(NotImplementedError, match="cannot grow"):
        torchlike.zeros(2).set_(st, 5, (4,), (1,))       # torch grows the storage
    with pytest.raises(NotImplementedError, match="alias one element twice"):
        torchlike.zeros(2).set_(torchlike.arange(6.), 0, (3,), (0,))
    with pytest.raises(NotImplementedError, match="reinterpreted"):
        torchlike.zeros(2, dtype=torchlike.int32).set_(st)


def test_set_fused_pending_source():
    # a source whose value is still pending in fused eager mode
    x = torchlike.zeros(3)
    y = torchlike.arange(3.) * 2 + 1
    x.set_(y)
    y.add_(1)
    assert x.tolist() == [2.0, 4.0, 6.0]


# ------------------------------------------------------------------ data_ptr / untyped_storage

def _ptr_story(m):
    z = m.zeros(4, 4)
    a, b = m.zeros(3, dtype=m.float64), m.zeros(3, dtype=m.float64)
    p = m.nn.Parameter(m.zeros(3))
    before = p.data_ptr()
    opt = m.optim.SGD([p], lr=1.0)
    p.grad = m.ones(3)
    opt.step()
    return [z[1].data_ptr() - z.data_ptr(), z[:, 2].data_ptr() - z.data_ptr(),
            z.t().data_ptr() == z.data_ptr(), z[1:, 2].untyped_storage().nbytes(),
            z[1].untyped_storage().data_ptr() == z.data_ptr(),
            z.detach().data_ptr() == z.data_ptr(), z.data.data_ptr() == z.data_ptr(),
            z.clone().data_ptr() == z.data_ptr(), m.zeros(4, 4).data_ptr() == z.data_ptr(),
            z.view(-1)[5:].data_ptr() - z.data_ptr(), z.untyped_storage().element_size(),
            z.untyped_storage().size(), len(z.untyped_storage()), m.zeros(0).data_ptr(),
            a[1:].data_ptr() - b.data_ptr() != 8,
            p.data_ptr() == before, z.data_ptr() != 0, z.data_ptr() % 64]


def test_data_ptr_and_untyped_storage_as_torch():
    assert _ptr_story(torchlike) == _ptr_story(torch)


def _raw_read(t):
    """The bytes C code reads at ``t.data_ptr()`` (as safetensors' save_file does)."""
    import ctypes
    n = t.numel() * t.element_size()
    return bytes((ctypes.c_ubyte * n).from_address(t.data_ptr()))


def _raw_story(m):
    import copy
    x = m.arange(12, dtype=m.float32).reshape(3, 4)
    clone = x.clone()
    x.data_ptr()
    deep = copy.deepcopy(x)
    out = [_raw_read(x), _raw_read(x[1]), _raw_read(x.to(m.bfloat16)),
           _raw_read(m.tensor([True, False]))]
    ptr = x.data_ptr()
    x.mul_(2)
    out += [x.data_ptr() == ptr, _raw_read(x), clone.data_ptr() != x.data_ptr(), _raw_read(clone),
            deep.data_ptr() != x.data_ptr(), _raw_read(deep), _raw_read(x)]
    return out


def test_raw_memory_at_data_ptr_holds_the_values():
    """C code that reads raw memory at ``data_ptr()`` (safetensors' save_file, ctypes) finds
    the tensor's bytes there, and the address is stable across in-place writes and unique to
    its storage (a clone has its own), as torch's; it pointed at no memory (a segfault)."""
    assert _raw_story(torchlike) == _raw_story(torch)


def test_untyped_storage_refuses_byte_access():
    s = torchlike.zeros(3).untyped_storage()
    with pytest.raises(NotImplementedError, match="UntypedStorage.resize_"):
        s.resize_(100)
    with pytest.raises(NotImplementedError, match="UntypedStorage.tolist"):
        s.tolist()


# ------------------------------------------------------------------ channels_last gradients

def _conv_story(m):
    m.manual_seed(0)
    conv = m.nn.Conv2d(3, 4, 3).to(memory_format=m.channels_last)
    x = m.randn(2, 3, 8, 8).to(memory_format=m.channels_last)
    conv(x).sum().backward()
    g = conv.weight.grad
    return (g.stride(), g.is_contiguous(memory_format=m.channels_last), conv.bias.grad.stride())


def test_channels_last_conv_weight_grad_as_torch():
    assert _conv_story(torchlike) == _conv_story(torch)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "ASGD",
                                  "Adadelta", "Rprop", "RMSprop", "Adagrad"])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_channels_last_grad_and_optimizer_state_as_torch(name, foreach):
    def run(m):
        p = m.nn.Parameter(m.randn(2, 3, 4, 5).to(memory_format=m.channels_last))
        extra = ({"lr": 0.1, "momentum": 0.9} if name == "SGD" else
                 {"momentum": 0.5, "centered": True} if name == "RMSprop" else {})
        opt = getattr(m.optim, name)([p], foreach=foreach, **extra)
        for _ in range(2):
            (p * p).sum().backward()
            opt.step()
        return (p.grad.stride(), p.stride(),
                p.grad.is_contiguous(memory_format=m.channels_last),
                sorted((k, v.stride()) for k, v in opt.state[p].items() if v.dim() == 4))
    assert run(torchlike) == run(torch)


@pytest.mark.parametrize("case", ["permuted", "channels_last_3d", "reduction", "accumulate",
                                  "create_graph", "autograd_grad", "plain_requires_grad"])
def test_grad_takes_the_parameter_layout_as_torch(case):
    def run(m):
        if case == "permuted":
            p = m.nn.Parameter(m.randn(3, 4).t())
        elif case == "channels_last_3d":
            p = m.nn.Parameter(m.randn(2, 3, 4, 5, 6).to(memory_format=m.channels_last_3d))
        elif case == "plain_requires_grad":
            p = m.randn(2, 3, 4, 5, requires_grad=True)
            (p.to(memory_format=m.channels_last) * 2).sum().backward()
            return p.grad.stride()
        else:
            p = m.nn.Parameter(m.randn(2, 3, 4, 5).to(memory_format=m.channels_last))
        if case == "reduction":
            p.sum(1).sum().backward()
        elif case == "accumulate":
            (p * 2).sum().backward()
            (p * 3).sum().backward()
        elif case == "create_graph":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (p * p).sum().backward(create_graph=True)
        elif case == "autograd_grad":
            return m.autograd.grad((p * 2).sum(), p)[0].stride()
        else:
            (p * 2).sum().backward()
        return p.stride(), p.grad.stride()
    assert run(torchlike) == run(torch)


def test_typed_storage_as_torch():
    """``Tensor.storage()`` (torch's deprecated TypedStorage): sizes in elements, the shared
    data pointer, its values, type name; a view's storage is its base's."""
    import warnings

    def run(m):
        t = m.arange(6.).reshape(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            s, v = t.storage(), t[1].storage()
        return (type(s).__name__, s.size(), len(s), str(s.dtype), str(s.device),
                s.data_ptr() == t.data_ptr(), v.data_ptr() == s.data_ptr(), s.element_size(),
                s.nbytes(), s.tolist(), s.is_shared(), s.type())
    import torch

    import torchlike
    assert run(torchlike) == run(torch)


def _file_storage_story(m, path):
    s = m.UntypedStorage.from_file(str(path), shared=False, nbytes=40)
    sl = s[8:16]
    out = [s.nbytes(), len(s), s[4], type(s[4]).__name__, sl.nbytes(), s.untyped() is s,
           hasattr(s, "_untyped"),
           m.asarray(sl, dtype=m.uint8, device="cpu").tolist(),
           m.asarray(s, dtype=m.float32).tolist(), m.asarray(s).tolist(),
           m.asarray(s[0:6]).tolist(), m.asarray(s[0:6], dtype=m.float32).tolist()]
    try:
        m.UntypedStorage.from_file(str(path), shared=False, nbytes=400)
    except RuntimeError as e:
        out.append(str(e))
    x = m.ones(2)
    out += [m.asarray(x) is x, m.asarray(x, copy=True) is x,
            m.asarray(x, requires_grad=True).requires_grad,
            str(m.asarray([1, 2], dtype=m.float64, copy=True).dtype)]
    for f in (lambda: m.asarray(x, dtype=m.float64, copy=False),
              lambda: m.asarray([1, 2], copy=False), lambda: m.asarray(3, copy=False),
              lambda: m.asarray(np.float32(2), copy=False),
              lambda: m.asarray(np.arange(3, dtype=np.int32), dtype=m.int64, copy=False)):
        try:
            f()
        except (ValueError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    out.append(m.asarray(np.arange(3.0), dtype=m.float64, copy=False).tolist())
    return out


def test_file_storage_bytes_and_asarray_as_torch(tmp_path):
    """What safetensors' loader does with torch: ``UntypedStorage.from_file``, a byte slice of
    the storage, ``torch.asarray(storage, dtype=...)`` reading its bytes, ``untyped()``; and
    ``asarray``'s ``copy`` (with torch's errors where it cannot alias) and ``requires_grad``.
    ``load_file`` failed on the first of them (it now
    loads under the drop-in runner); a private name of a storage is no attribute (``hasattr``
    raised)."""
    path = tmp_path / "bytes.bin"
    path.write_bytes(np.arange(10, dtype=np.float32).tobytes())
    ours = _file_storage_story(torchlike, path)
    theirs = _file_storage_story(torch, path)
    assert ours == theirs


def test_view_by_keyword_as_torch():
    """``view(dtype=...)`` and ``view(size=...)`` (safetensors views its bytes so), and
    torch's TypeError for a call matching neither overload."""
    def story(m):
        x = m.ones(2)
        out = [x.view(dtype=m.int32).tolist(), list(x.view(size=(2, 1)).shape)]
        for args, kwargs in (((m.int32,), {"dtype": m.int32}), ((), {"foo": 1}),
                             ((2,), {"size": (2,)})):
            with pytest.raises(TypeError) as e:
                x.view(*args, **kwargs)
            out.append(str(e.value))
        return out
    assert story(torchlike) == story(torch)
