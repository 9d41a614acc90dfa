"""Batch normalisation (torch.nn.modules.batchnorm)."""
from __future__ import annotations

from ... import _creation
from ...autograd.grad_mode import no_grad as _no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import _lazy_norm
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_creation.empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(_creation.empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            from ... import long
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "bias={use_bias}, track_running_stats={track_running_stats}".format(
                    **self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                from ... import long
                state_dict[key] = (self.num_batches_tracked
                                   if self.num_batches_tracked is not None
                                   else _creation.tensor(0, dtype=long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        if self.momentum is None:
            eaf = 0.0
        else:
            eaf = self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                with _no_grad():                # (torch: num_batches_tracked.add_(1))
                    self.num_batches_tracked.add_(1)
                if self.momentum is None:
                    eaf = 1.0 / float(self.num_batches_tracked.item())
                else:
                    eaf = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias,
                            bn_training, eaf, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm whose training statistics are those of the whole batch across the ranks of
    ``process_group`` (the default group when None): the per-channel mean, then the variance
    around it, are all-reduced with gradients (``torchlike.distributed.nn.all_reduce``), so
    the result equals BatchNorm over the ranks' concatenated batches. Outside training, or in
    a world of one process, it is BatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        from ... import distributed as dist
        need_sync = (self.training and dist.is_initialized()
                     and dist.get_world_size(self.process_group) > 1)
        if not need_sync:
            return _BatchNorm.forward(self, input)
        from ...autograd.grad_mode import no_grad
        from ...distributed.nn import all_reduce
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked._set_data(self.num_batches_tracked._data + 1)
            if self.momentum is None:
                eaf = 1.0 / float(self.num_batches_tracked.item())
        dims = [0] + list(range(2, input.dim()))
        shape = [1, input.size(1)] + [1] * (input.dim() - 2)
        count = input.numel() // input.size(1)
        c = all_reduce(input.new_full((1,), float(count)), group=self.process_group)
        mean = all_reduce(input.sum(dims), group=self.process_group) / c
        xc = input - mean.view(shape)
        var = all_reduce((xc * xc).sum(dims), group=self.process_group) / c
        y = xc * (var.view(shape) + self.eps).rsqrt()
        if self.weight is not None:
            y = y * self.weight.view(shape)
        if self.bias is not None:
            y = y + self.bias.view(shape)
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():
                n = float(c.item())
                self.running_mean._set_data(((1 - eaf) * self.running_mean
                                             + eaf * mean.detach())._data)
                self.running_var._set_data(((1 - eaf) * self.running_var
                                            + eaf * var.detach() * (n / max(n - 1, 1)))._data)
        return y

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm holding its state."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group)
            if module.affine:
                from ...autograd.grad_mode import no_grad
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, __name__)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, __name__)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, __name__)
