"""torch.utils.data._utils.collate."""
import re

from .._impl import (collate, collate_float_fn, collate_int_fn,  # noqa: F401
                     collate_numpy_array_fn, collate_numpy_scalar_fn, collate_str_fn,
                     collate_tensor_fn, default_collate, default_collate_fn_map,
                     default_convert)
from .._impl import _COLLATE_ERR as default_collate_err_msg_format  # noqa: F401

np_str_obj_array_pattern = re.compile(r"[SaUO]")     # numpy dtypes collation refuses

__all__ = ["default_collate", "default_convert"]
