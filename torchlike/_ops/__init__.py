"""Op families, one module per concept (arithmetic, compare, unary, view, join, scatter, reduce,
linalg, ...). Each module defines its ops once (``defop``) and declares each public function's
surface at its definition (``_surface.public``); ``torchlike/__init__.py`` re-exports each
module's ``__all__`` and ``_surface.bind`` writes the declared Tensor methods. The registry
(``torchlike._registry``) and storage's in-place and ``out=`` writers are core, below them.
"""
