"""torch.utils.tensorboard.

torch's module first imports the ``tensorboard`` package: without it, the import raises the same
``ModuleNotFoundError: No module named 'tensorboard'`` here, so a program's
``try: from torch.utils.tensorboard import SummaryWriter / except ImportError`` takes the same
branch. With tensorboard installed, torchlike has no SummaryWriter (torch's writes protobuf
summaries through its own tensor conversions): the import raises an ImportError saying so
(DIFFERENCES.md), never a writer that drops what it is given.
"""
import tensorboard

raise ImportError("torchlike.utils.tensorboard: SummaryWriter is not provided by torchlike "
                  "(tensorboard is installed, but torchlike has no event writer); log with "
                  "tensorboard's own API or another logger (see DIFFERENCES.md)")
