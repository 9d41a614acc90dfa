"""torchlike.nn: modules, parameters, functional and init."""
from .parameter import Parameter, Buffer  # noqa: F401
from . import modules  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
