"""torch._dynamo.config: settings scripts assign (``cache_size_limit``,
``suppress_errors``, ...). They are kept and read back; torchlike.compile does not use them."""
cache_size_limit = 8
accumulated_cache_size_limit = 256
recompile_limit = 8
accumulated_recompile_limit = 256
suppress_errors = False
verbose = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
optimize_ddp = True
inline_inbuilt_nn_modules = True
