"""torchlike.nn.modules: each layer in the file torch keeps it in (``torch.nn.modules.<file>``)."""
from .module import Module  # noqa: F401
from .linear import Identity, Linear, Bilinear, LazyLinear  # noqa: F401
from .container import (Container, Sequential, ModuleList, ModuleDict, ParameterList,  # noqa
                        ParameterDict)
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
from ..parameter import UninitializedParameter, UninitializedBuffer  # noqa: F401
from ..parallel import DataParallel  # noqa: F401
from . import module  # noqa: F401
from . import utils  # noqa: F401
