"""Stands in for ``torch``: installs torchlike's drop-in, after which ``torch`` is torchlike.

Found only through ``PYTHONPATH`` (see ``torchlike/_dropin_shim/__init__.py``). The import
system returns ``sys.modules["torch"]`` once this module ran, and ``install`` puts torchlike
there.
"""
from torchlike._dropin import install as _install

_install(_shim=__name__)
