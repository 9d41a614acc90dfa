from .module import Module  # noqa: F401
from .linear import Linear, Identity  # noqa: F401
from .container import (Sequential, ModuleList, ModuleDict, ParameterList, DataParallel,  # noqa
                        ParameterDict)
from .activation import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from . import module  # noqa: F401
from . import utils  # noqa: F401
