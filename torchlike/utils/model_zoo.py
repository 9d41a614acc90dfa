"""torch.utils.model_zoo: torch.hub's loader under its old name."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

try:                                    # torch re-exports torch.hub's tqdm (torchvision uses it)
    from ..hub import tqdm  # noqa: F401
except ImportError:                     # (torchlike.hub has no progress bar)
    pass
