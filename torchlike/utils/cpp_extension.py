"""torch.utils.cpp_extension: building C++/CUDA operators against torch's C++ library, which
torchlike does not have. The names import (libraries import them at module level and fall back
when a build fails, as peft does); every build raises a RuntimeError saying why."""
from __future__ import annotations

__all__ = ["load", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension",
           "include_paths", "library_paths", "is_ninja_available",
           "verify_ninja_availability", "CUDA_HOME", "ROCM_HOME"]

CUDA_HOME = None
ROCM_HOME = None


def _refuse(what):
    return RuntimeError(
        f"torch.utils.cpp_extension.{what}: torchlike (PyTorch's API on JAX) has no C++ "
        f"library to build extensions against; write the operator with torchlike ops, or "
        f"register a Python implementation with torchlike.library")


def load(name, sources, *args, **kwargs):
    raise _refuse("load")


def load_inline(name, cpp_sources, *args, **kwargs):
    raise _refuse("load_inline")


def CppExtension(name, sources, *args, **kwargs):
    raise _refuse("CppExtension")


def CUDAExtension(name, sources, *args, **kwargs):
    raise _refuse("CUDAExtension")


class BuildExtension:
    def __init__(self, *args, **kwargs):
        raise _refuse("BuildExtension")

    @classmethod
    def with_options(cls, **options):
        return cls


def include_paths(*args, **kwargs):
    raise _refuse("include_paths")


def library_paths(*args, **kwargs):
    raise _refuse("library_paths")


def is_ninja_available():
    return False


def verify_ninja_availability():
    raise RuntimeError("Ninja is required to load C++ extensions")
