"""torch.func.rearrange: einops-style ``rearrange`` (names, parenthesised groups, ``...``)."""
from __future__ import annotations

import re

__all__ = ["rearrange", "debug_unwrap"]

_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S")


def _parse(side):
    """A side of the pattern as a list of groups; each group a list of names ("..." allowed)."""
    groups, cur = [], None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if cur is not None:
                raise ValueError("rearrange: nested parentheses are not allowed")
            cur = []
        elif tok == ")":
            if cur is None:
                raise ValueError("rearrange: unbalanced parentheses")
            groups.append(cur)
            cur = None
        elif tok == "..." or tok[0].isalpha() or tok[0] == "_":
            if cur is not None:
                cur.append(tok)
            else:
                groups.append([tok])
        else:
            raise ValueError(f"rearrange: unexpected token {tok!r} in pattern")
    if cur is not None:
        raise ValueError("rearrange: unbalanced parentheses")
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder/merge/split dimensions by an einops pattern, e.g. ``"b c h w -> b (h w) c"``."""
    from .._ops.join import stack
    from .._tensor import Tensor
    if isinstance(tensor, (list, tuple)):
        tensor = stack(list(tensor))
    if not isinstance(tensor, Tensor):
        raise TypeError(f"rearrange: expected a Tensor, got {type(tensor).__name__}")
    if "->" not in pattern:
        raise ValueError(f"rearrange: pattern must contain '->', got {pattern!r}")
    left_s, right_s = pattern.split("->")
    left, right = _parse(left_s), _parse(right_s)
    lnames = [n for g in left for n in g]
    rnames = [n for g in right for n in g]
    for names, side in ((lnames, "left"), (rnames, "right")):
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"rearrange: indexing expression contains duplicate dimensions "
                             f"{sorted(dup)} on the {side}")
    only = set(lnames) ^ set(rnames)
    if only:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on "
                         f"both): {only}")
    shape = list(tensor.shape)
    n_fixed = len([g for g in left if g != ["..."]])
    has_ell = ["..."] in left or any("..." in g for g in left)
    if any("..." in g and len(g) > 1 for g in left):
        raise ValueError("rearrange: '...' cannot be inside parentheses on the left")
    if (has_ell and len(shape) < n_fixed) or (not has_ell and len(shape) != len(left)):
        raise ValueError(f"rearrange: pattern {left_s.strip()!r} has {len(left)} dimension(s) "
                         f"but the tensor has {len(shape)}")
    sizes = dict(axes_lengths)
    flat_names, flat_sizes = [], []
    dim = 0
    ell_dims = []
    for g in left:
        if g == ["..."]:
            k = len(shape) - n_fixed
            ell_dims = [f"...{i}" for i in range(k)]
            for i, n in enumerate(ell_dims):
                sizes[n] = shape[dim + i]
            flat_names += ell_dims
            flat_sizes += shape[dim:dim + k]
            dim += k
            continue
        size = shape[dim]
        unknown = [n for n in g if n not in sizes]
        known = 1
        for n in g:
            if n in sizes:
                known *= sizes[n]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: could not infer sizes for {unknown}")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"rearrange: dimension {dim} of size {size} cannot be split "
                                 f"into {g}")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"rearrange: dimension {dim} has size {size}, but {g} multiply "
                             f"to {known}")
        flat_names += g
        flat_sizes += [sizes[n] for n in g]
        dim += 1

    def expand(names):
        out = []
        for n in names:
            out += ell_dims if n == "..." else [n]
        return out

    order = [flat_names.index(n) for g in right for n in expand(g)]
    out_shape = []
    for g in right:
        if g == ["..."]:                  # a bare ellipsis keeps its dimensions
            out_shape += [sizes[n] for n in ell_dims]
            continue
        p = 1
        for n in expand(g):
            p *= sizes[n]
        out_shape.append(p)
    return tensor.reshape(flat_sizes).permute(order).reshape(out_shape)


def debug_unwrap(tensor, *, recurse=True):
    """torch.func.debug_unwrap: torchlike has no wrapper tensors (a Tensor inside a transform
    holds a jax tracer), so the tensor is returned as it is."""
    return tensor
