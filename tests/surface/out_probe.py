"""Which torch functions take ``out=``, read from torch's argument parser."""
import inspect
import re

import torch

_BAD = object()


def takes_out(fn):
    if type(fn).__name__ != "builtin_function_or_method":
        try:
            return "out" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return False
    t = torch.ones(2, 2)
    i = torch.tensor([0])
    for args in ((t,), (t, t), (t, t, t), (t, 0), (t, 1, 1), ((t, t),), ((2, 2),), (2, 2), (),
                 (t, 0, i), (t, 0, i, t[:1]), (t, 0, i, t[:1], "prod")):     # (the index_ ops)
        try:
            fn(*args, out=_BAD)
        except TypeError as e:
            msg = str(e)
            if "argument 'out'" in msg and "unexpected keyword" not in msg:
                return True
            if "but expected" in msg and re.search(r"\bout = None", msg):
                return True
        except Exception:
            pass
    return False
