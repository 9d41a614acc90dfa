"""torch.sparse: products and sums of sparse COO tensors (``torchlike._sparse``)."""
from __future__ import annotations

from .._sparse import SparseTensor as _SparseTensor
from .._sparse import spmm  # noqa: F401  (torch.spmm, also torch.sparse.spmm)
from .._sparse import sum as _sum

__all__ = ["mm", "sum", "spmm", "check_sparse_tensor_invariants"]


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: ``mat1 @ mat2`` with a sparse operand (the sparse one's gradient is
    sparse, with its pattern)."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}): torchlike supports "
                                  f"reduce='sum' only")
    import torchlike
    return torchlike.mm(mat1, mat2)


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: the sum of a sparse tensor's entries (over ``dim``: sparse, dense
    once no sparse dim is left)."""
    if not isinstance(input, _SparseTensor):
        import torchlike
        return torchlike.sum(input, dtype=dtype) if dim is None else \
            torchlike.sum(input, dim, dtype=dtype)
    return _sum(input, dim, dtype=dtype)


class check_sparse_tensor_invariants:
    """torch.sparse.check_sparse_tensor_invariants: torchlike checks a sparse tensor's
    indices at construction always, so this context manager and decorator change nothing."""

    def __init__(self, enable=True):
        self.enable = enable

    @staticmethod
    def is_enabled():
        return True

    @staticmethod
    def enable():
        pass

    @staticmethod
    def disable():
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
