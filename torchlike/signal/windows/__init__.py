"""torchlike.signal.windows: torch.signal.windows' window functions (SciPy's conventions).

The functions live in ``windows.windows``, as torch's do (``torch.signal.windows.windows``).
"""
from .windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
    __all__,        # (one list, where the functions live)
)
