"""Op families (pointwise, reduce, shape, index, linalg, ...), each declaring its ops once.

``torchlike/__init__.py`` imports the families after ``_tensor`` so that they can attach their
Tensor methods; the registry (``torchlike._registry``) is core, below them.
"""
