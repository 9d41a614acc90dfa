"""torchlike.nn: modules, parameters, functional and init."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from . import modules  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .modules.container import Container  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import grad  # noqa: F401  (torch.nn.grad, also torch.nn.functional.grad)
from . import _reduction  # noqa: F401,E402
from . import common_types  # noqa: F401,E402
functional.grad = grad
import importlib as _importlib
# ``from .modules import *`` also brings ``modules.utils`` (torch's _pair helpers); bind the
# package ``torchlike.nn.utils`` explicitly
utils = _importlib.import_module(".utils", __name__)

from .._lazy import lazy_submodules as _lazy_submodules  # noqa: E402

# torch.nn.attention on first use
__getattr__ = _lazy_submodules(__name__, {"attention"})
