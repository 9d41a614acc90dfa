"""A directory put at the front of ``PYTHONPATH`` by torchlike's drop-in runner.

It holds one package, ``torch``, whose import installs the drop-in (``torchlike._dropin``) in
the process that imports it. Child processes (DataLoader workers, ``multiprocessing.spawn``,
launchers, ``subprocess`` running Python) inherit ``PYTHONPATH``, so their ``import torch``
resolves to torchlike as it does in the parent.
"""
