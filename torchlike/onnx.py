"""torchlike.onnx: importable; exporting to ONNX is not available (see ``export``)."""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "dynamo_export", "OperatorExportTypes",
           "TrainingMode", "register_custom_op_symbolic"]

_NO_ONNX = ("torchlike cannot export ONNX graphs (it records no TorchScript/FX graph). "
            "Alternatives: jax.export (StableHLO) of a function built with torchlike.func, "
            "or run the same script under PyTorch and call torch.onnx.export there")


def export(model, args=(), f=None, *a, **kw):
    raise NotImplementedError(f"torch.onnx.export: {_NO_ONNX}")


def dynamo_export(model, *a, **kw):
    raise NotImplementedError(f"torch.onnx.dynamo_export: {_NO_ONNX}")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    raise NotImplementedError(f"torch.onnx.register_custom_op_symbolic: {_NO_ONNX}")


def is_in_onnx_export():
    return False


class OperatorExportTypes:
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode:
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2
