"""torch.utils.flop_counter: ``FlopCounterMode`` counts the FLOPs of matrix products and
convolutions run inside it, in total and per module (Lightning's model summary, throughput
meters).

torch counts them by intercepting ATen calls; torchlike sees every op at its registry's hook
point (``autograd._apply_hooks``) and applies torch's formulas to its ops: ``mm``, ``addmm``,
``bmm``, ``baddbmm`` and ``convolution`` (2 FLOPs a multiply-add), a matrix-vector product and
anything else counting 0, as in torch. A product of a 3-D (or more) tensor and a matrix counts
as the ``mm`` of its rows (torch folds it so), a broadcast batched product as a ``bmm``. The
backward of a counted op is counted when the gradient reaches its output (a hook): the same
FLOPs again per input that needs a gradient (``mm`` for the products, ``convolution_backward``
for a convolution), under the modules that ran its forward (torch's module tracker leaves a
module once any of its inputs has its gradient, and can put the rest under a sibling:
DIFFERENCES.md). Modules are named as torch's
module tracker names them: the outermost by its class (``"MyNet"``), the others by their
attribute path below it (``"MyNet.encoder.0"``), all under ``"Global"``.
"""
from __future__ import annotations

import collections
import math

__all__ = ["FlopCounterMode"]


class _Key(str):
    """An op with no ``torchlike.ops.aten`` overload packet (``convolution_backward``): its
    name, as torch's packet prints."""

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


def _aten(name):
    from .. import ops
    try:
        return getattr(ops.aten, name)
    except AttributeError:
        return _Key("aten." + name)


def _mm(m, k, n):
    return 2 * m * k * n


def _products(op, args, static):
    """``(aten op name, forward FLOPs, the positions of the inputs whose gradients are products
    of the same size)`` of a registry call, or None for an op torch does not count."""
    name = op.name
    shapes = [tuple(a.shape) if hasattr(a, "shape") else None for a in args]
    if name == "matmul":
        a, b = shapes[0], shapes[1]
        if len(a) < 2 or len(b) < 2:
            return None                         # (matrix-vector: torch counts none)
        if len(b) == 2:                         # (rows of a times b: one mm)
            return "mm", _mm(math.prod(a[:-1]), a[-1], b[-1]), (0, 1)
        batch = math.prod(max(x, y) for x, y in zip((1,) * (len(b) - len(a)) + a[:-2],
                                                   (1,) * (len(a) - len(b)) + b[:-2]))
        return "bmm", batch * _mm(a[-2], a[-1], b[-1]), (0, 1)
    if name == "addmm":
        kind = static.get("kind")
        a, b = shapes[1], shapes[2]
        if kind == "bmm":
            return "baddbmm", a[0] * _mm(a[1], a[2], b[2]), (1, 2)
        if kind == "linear":                    # (input rows times weight transposed)
            return "addmm", _mm(math.prod(a[:-1]), a[-1], b[0]), (1, 2)
        if len(a) == 2 and len(b) == 2:
            return "addmm", _mm(a[0], a[1], b[1]), (1, 2)
        return None
    if name == "convolution":
        x, w = shapes[0], shapes[1]
        if static.get("unbatched"):
            x = (1, *x)
        nd = static.get("nd", len(w) - 2)
        out = []
        for i in range(nd):
            pad = static["padding"][i]
            lo, hi = (pad, pad) if isinstance(pad, int) else pad
            k = static["dilation"][i] * (w[2 + i] - 1) + 1
            out.append((x[2 + i] + lo + hi - k) // static["stride"][i] + 1)
        flops = 2 * x[0] * w[0] * w[1] * math.prod(w[2:]) * math.prod(out)
        return "convolution", flops, (0, 1)
    return None


class FlopCounterMode:
    """Count the FLOPs of the products and convolutions run inside (``with FlopCounterMode()
    as fc: ...; fc.get_total_flops()``). ``depth`` bounds the modules ``display`` prints;
    ``mods`` is accepted as torch's (deprecated there: every module is tracked)."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if custom_mapping:
            raise NotImplementedError("FlopCounterMode(custom_mapping=...): formulas are keyed "
                                      "by ATen ops, which torchlike's ops are not")
        self.depth = depth
        self.display = display
        self.flop_counts = collections.defaultdict(lambda: collections.defaultdict(int))
        self._modules = []          # (module, name) of the modules running now
        self._handles = []

    # ------------------------------------------------------------------ counting

    def _add(self, modules, key, flops):
        for name in ("Global", *modules):
            self.flop_counts[name][key] += flops

    def _hook(self, op, args, static):
        got = _products(op, args, static)
        if got is None:
            return NotImplemented
        name, flops, inputs = got
        from ..autograd import _apply_hooks
        from .. import is_grad_enabled
        modules = tuple(name for _m, name in self._modules)
        self._add(modules, _aten(name), flops)
        T = _apply_hooks.tensor_class()
        needs = [i for i in inputs if isinstance(args[i], T) and args[i].requires_grad]
        if not needs or not is_grad_enabled():
            return NotImplemented
        # (the op runs now, as it would have; its output's gradient counts its backward)
        _apply_hooks.uninstall("flop_counter")
        try:
            out = _apply_hooks.apply(op, *args, **static)
        finally:
            _apply_hooks.install("flop_counter", self._hook)
        key = _aten("convolution_backward" if name == "convolution" else "mm"
                    if name in ("mm", "addmm") else name)
        back = flops * len(needs)

        def count(grad):
            self._add(modules, key, back)       # (under the modules that ran the forward)
        first = out[0] if isinstance(out, tuple) else out
        if isinstance(first, T) and first.requires_grad:
            first.register_hook(count)
        return out

    # ------------------------------------------------------------------ modules

    def _enter_module(self, module, args):
        if self._modules:
            parent, parent_name = self._modules[-1]
            attr = next((k for k, c in parent._modules.items() if c is module), None)
            name = f"{parent_name}.{attr if attr is not None else type(module).__name__}"
        else:
            name = type(module).__name__
        self._modules.append((module, name))

    def _exit_module(self, module, args, output):
        if self._modules and self._modules[-1][0] is module:
            self._modules.pop()

    # ------------------------------------------------------------------ the context

    def __enter__(self):
        from ..autograd import _apply_hooks
        from ..nn.modules import module as _m
        self.flop_counts.clear()
        self._modules = []
        self._handles = [_m.register_module_forward_pre_hook(self._enter_module),
                         _m.register_module_forward_hook(self._exit_module, always_call=True)]
        _apply_hooks.install("flop_counter", self._hook)
        return self

    def __exit__(self, *exc):
        from ..autograd import _apply_hooks
        _apply_hooks.uninstall("flop_counter")
        for h in self._handles:
            h.remove()
        self._handles = []
        if self.display:
            print(self.get_table(self.depth))
        return False

    # ------------------------------------------------------------------ results

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """``{module name: {op: FLOPs}}``, ``"Global"`` holding every count."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        depth = self.depth if depth is None else depth
        total = self.get_total_flops() or 1
        rows = [("Module", "FLOP", "% Total")]
        for name, ops in self.flop_counts.items():
            if name != "Global" and name.count(".") + 1 > depth:
                continue
            n = sum(ops.values())
            rows.append((name, _readable(n), f"{100 * n / total:.2f}%"))
            for op, c in ops.items():
                rows.append((f" - {op}", _readable(c), f"{100 * c / total:.2f}%"))
        width = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, width)) for r in rows)


def _readable(n):
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3f}{unit}"
    return str(n)
