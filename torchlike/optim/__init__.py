"""torchlike.optim: torch's optimizers, each group update one jitted jax function."""
from .optimizer import Optimizer  # noqa: F401
from ._algorithms import (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax,  # noqa: F401
                          NAdam, RAdam, Rprop, ASGD, Adafactor, Muon)
from .lbfgs import LBFGS  # noqa: F401,E402
from .sparse_adam import SparseAdam  # noqa: F401,E402
from . import lr_scheduler  # noqa: F401,E402
from . import swa_utils  # noqa: F401,E402
# torch's per-optimizer modules (torch.optim.adam.Adam, ...)
from . import (adam, adamw, sgd, rmsprop, adagrad, adadelta, adamax, nadam,  # noqa: F401,E402
               radam, asgd, rprop, lbfgs, sparse_adam)
