"""Op families (pointwise, reduce, shape, index, linalg, ...), each declaring its ops once.

``torchlike/__init__.py`` imports the families after ``_tensor`` so that they can attach their
Tensor methods; ``_registry`` is imported first by ``_tensor`` itself.
"""
