"""Layers and losses vs torch: same weights (copied through state_dict), same outputs,
input gradients and parameter gradients, in train and eval mode."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from nn_util import compare_module

R = np.random.default_rng(1234)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def ints(high, *shape):
    return R.integers(0, high, shape).astype(np.int64)


def probs(*shape):
    x = R.random(shape).astype(np.float32)
    return x / x.sum(axis=1, keepdims=True)


# (id, ctor(nn), inputs)
ACTIVATIONS = [
    ("ReLU", lambda nn: nn.ReLU(), (f32(4, 5),)),
    ("ReLU6", lambda nn: nn.ReLU6(), (f32(4, 5, scale=5),)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), (f32(3, 4),)),
    ("PReLU1", lambda nn: nn.PReLU(), (f32(3, 4, 2),)),
    ("PReLU3", lambda nn: nn.PReLU(3, init=0.1), (f32(2, 3, 5),)),
    ("ELU", lambda nn: nn.ELU(0.7), (f32(3, 4),)),
    ("SELU", lambda nn: nn.SELU(), (f32(3, 4),)),
    ("CELU", lambda nn: nn.CELU(1.5), (f32(3, 4),)),
    ("GELU", lambda nn: nn.GELU(), (f32(3, 4),)),
    ("GELU_tanh", lambda nn: nn.GELU(approximate="tanh"), (f32(3, 4),)),
    ("SiLU", lambda nn: nn.SiLU(), (f32(3, 4),)),
    ("Mish", lambda nn: nn.Mish(), (f32(3, 4),)),
    ("Sigmoid", lambda nn: nn.Sigmoid(), (f32(3, 4),)),
    ("Tanh", lambda nn: nn.Tanh(), (f32(3, 4),)),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.7), (f32(3, 4),)),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), (f32(3, 4, scale=4),)),
    ("Hardswish", lambda nn: nn.Hardswish(), (f32(3, 4, scale=4),)),
    ("Softplus", lambda nn: nn.Softplus(), (f32(3, 4),)),
    ("Softplus_beta", lambda nn: nn.Softplus(beta=2, threshold=1.5), (f32(3, 4),)),
    ("Softsign", lambda nn: nn.Softsign(), (f32(3, 4),)),
    ("Softmax", lambda nn: nn.Softmax(dim=1), (f32(3, 4),)),
    ("Softmax0", lambda nn: nn.Softmax(dim=0), (f32(3, 4, 2),)),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=-1), (f32(3, 4),)),
    ("Softmin", lambda nn: nn.Softmin(dim=1), (f32(3, 4),)),
    ("GLU", lambda nn: nn.GLU(), (f32(3, 6),)),
    ("GLU_dim0", lambda nn: nn.GLU(0), (f32(4, 3),)),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), (f32(3, 4),)),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), (f32(3, 4),)),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), (f32(3, 4),)),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.3), (f32(3, 4),)),
    ("Softshrink", lambda nn: nn.Softshrink(0.3), (f32(3, 4),)),
]

LAYERS = [
    ("Linear", lambda nn: nn.Linear(5, 3), (f32(4, 5),)),
    ("Linear3d", lambda nn: nn.Linear(5, 3), (f32(2, 4, 5),)),
    ("Linear_nobias", lambda nn: nn.Linear(5, 3, bias=False), (f32(4, 5),)),
    ("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), (f32(5, 3), f32(5, 4))),
    ("Identity", lambda nn: nn.Identity(), (f32(2, 3),)),
    ("Flatten", lambda nn: nn.Flatten(), (f32(2, 3, 4),)),
    ("Flatten02", lambda nn: nn.Flatten(0, 1), (f32(2, 3, 4),)),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), (f32(4, 6),)),
    ("Embedding", lambda nn: nn.Embedding(10, 4), (ints(10, 3, 5),)),
    ("Embedding_pad", lambda nn: nn.Embedding(10, 4, padding_idx=2),
     (np.array([[2, 3, 2], [1, 2, 9]], np.int64),)),
    ("Embedding_negpad", lambda nn: nn.Embedding(10, 4, padding_idx=-1),
     (np.array([[9, 3, 2], [1, 9, 9]], np.int64),)),
    ("EmbeddingBag_mean", lambda nn: nn.EmbeddingBag(10, 4), (ints(10, 3, 5),)),
    ("EmbeddingBag_sum_pad", lambda nn: nn.EmbeddingBag(10, 4, mode="sum", padding_idx=2),
     (np.array([[2, 3, 2], [1, 2, 9]], np.int64),)),
    ("EmbeddingBag_max", lambda nn: nn.EmbeddingBag(10, 4, mode="max"), (ints(10, 3, 5),)),
    ("EmbeddingBag_mean_pad", lambda nn: nn.EmbeddingBag(10, 4, padding_idx=0),
     (np.array([[0, 3, 0], [0, 0, 0]], np.int64),)),
    ("Conv3d", lambda nn: nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1),
     (f32(2, 2, 4, 5, 4),)),
    ("InstanceNorm1d_track", lambda nn: nn.InstanceNorm1d(3, affine=True,
                                                         track_running_stats=True),
     (f32(2, 3, 6),)),
    ("LayerNorm", lambda nn: nn.LayerNorm(5), (f32(3, 5),)),
    ("LayerNorm2", lambda nn: nn.LayerNorm((4, 5)), (f32(2, 3, 4, 5),)),
    ("LayerNorm_noaffine", lambda nn: nn.LayerNorm(5, elementwise_affine=False), (f32(3, 5),)),
    ("LayerNorm_nobias", lambda nn: nn.LayerNorm(5, bias=False), (f32(3, 5),)),
    ("RMSNorm", lambda nn: nn.RMSNorm(5), (f32(3, 5),)),
    ("RMSNorm_eps", lambda nn: nn.RMSNorm([2, 5], eps=1e-3), (f32(3, 2, 5),)),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (f32(3, 4, 5),)),
    ("GroupNorm2d", lambda nn: nn.GroupNorm(3, 6, affine=False), (f32(2, 6, 3, 3),)),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(4), (f32(8, 4),)),
    ("BatchNorm1d_3d", lambda nn: nn.BatchNorm1d(3), (f32(4, 3, 5),)),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), (f32(4, 3, 5, 5),)),
    ("BatchNorm2d_mom", lambda nn: nn.BatchNorm2d(3, momentum=0.3, eps=1e-3),
     (f32(4, 3, 2, 2),)),
    ("BatchNorm2d_cumavg", lambda nn: nn.BatchNorm2d(3, momentum=None), (f32(4, 3, 2, 2),)),
    ("BatchNorm1d_noaffine", lambda nn: nn.BatchNorm1d(4, affine=False), (f32(8, 4),)),
    ("BatchNorm1d_notrack", lambda nn: nn.BatchNorm1d(4, track_running_stats=False),
     (f32(8, 4),)),
    ("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3), (f32(2, 3, 4, 4),)),
    ("InstanceNorm2d_affine", lambda nn: nn.InstanceNorm2d(3, affine=True), (f32(2, 3, 4, 4),)),
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3), (f32(2, 3, 10),)),
    ("Conv1d_s2p1", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), (f32(2, 3, 11),)),
    ("Conv1d_same_dil", lambda nn: nn.Conv1d(2, 4, 4, padding="same", dilation=2),
     (f32(2, 2, 9),)),
    ("Conv1d_groups", lambda nn: nn.Conv1d(4, 6, 3, groups=2, bias=False), (f32(2, 4, 7),)),
    ("Conv1d_unbatched", lambda nn: nn.Conv1d(3, 2, 2), (f32(3, 6),)),
    ("Conv2d", lambda nn: nn.Conv2d(3, 4, 3), (f32(2, 3, 8, 8),)),
    ("Conv2d_stride", lambda nn: nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0)),
     (f32(2, 3, 9, 7),)),
    ("Conv2d_same", lambda nn: nn.Conv2d(2, 3, 4, padding="same"), (f32(1, 2, 7, 6),)),
    ("Conv2d_valid", lambda nn: nn.Conv2d(2, 3, 3, padding="valid"), (f32(1, 2, 7, 6),)),
    ("Conv2d_dil_groups", lambda nn: nn.Conv2d(4, 4, 3, dilation=2, groups=4, padding=2),
     (f32(2, 4, 8, 8),)),
    ("Conv2d_reflect", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     (f32(1, 2, 5, 5),)),
    ("Conv2d_circular", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"),
     (f32(1, 2, 5, 5),)),
    ("Conv2d_replicate", lambda nn: nn.Conv2d(2, 3, 3, padding=2, padding_mode="replicate"),
     (f32(1, 2, 5, 5),)),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1,
                                                      output_padding=1), (f32(2, 3, 5),)),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2),
     (f32(2, 4, 4, 4),)),
    ("ConvTranspose2d_dil", lambda nn: nn.ConvTranspose2d(2, 3, 2, dilation=2, padding=1),
     (f32(1, 2, 4, 5),)),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(2, 2, 2, stride=2, padding=(0, 1, 0)),
     (f32(1, 2, 2, 3, 2),)),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3), (f32(2, 3, 10),)),
    ("MaxPool1d_s1p1", lambda nn: nn.MaxPool1d(3, stride=1, padding=1), (f32(2, 3, 10),)),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), (f32(2, 3, 8, 8),)),
    ("MaxPool2d_ceil", lambda nn: nn.MaxPool2d(3, stride=2, ceil_mode=True),
     (f32(2, 3, 8, 8),)),
    ("MaxPool2d_dil", lambda nn: nn.MaxPool2d(2, stride=1, padding=1, dilation=2),
     (f32(1, 2, 6, 7),)),
    ("MaxPool2d_idx", lambda nn: nn.MaxPool2d(2, return_indices=True), (f32(2, 3, 6, 6),)),
    ("MaxPool1d_idx", lambda nn: nn.MaxPool1d(3, 2, padding=1, return_indices=True),
     (f32(2, 3, 9),)),
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2, stride=1, padding=1), (f32(1, 2, 3, 4, 3),)),
    ("MaxPool3d_idx", lambda nn: nn.MaxPool3d(2, return_indices=True), (f32(1, 2, 4, 4, 4),)),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(2, 1, 1, count_include_pad=False),
     (f32(1, 2, 3, 4, 3),)),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, 3, 1)), (f32(1, 2, 5, 4, 3),)),
    ("RReLU_eval_or_train0", lambda nn: nn.RReLU(0.2, 0.2), (f32(3, 4),)),
    ("Softmax2d", lambda nn: nn.Softmax2d(), (f32(2, 3, 2, 2),)),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d((2, 3, 2)), (f32(1, 2, 5, 4, 3),)),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 1)), (f32(1, 2, 2, 3, 2),)),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d(1), (f32(1, 2, 3, 3, 3),)),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(1), (f32(1, 2, 3, 3, 3),)),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2, affine=True), (f32(2, 2, 3, 3, 2),)),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
     (f32(1, 2, 3, 3),)),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(5, 4)),
     (f32(1, 2, 3, 3),)),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(3), (f32(2, 6, 2, 2),)),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3, alpha=0.1), (f32(2, 5, 3, 3),)),
    ("LocalResponseNorm_even", lambda nn: nn.LocalResponseNorm(2, k=2.0), (f32(2, 4, 6),)),
    ("LPPool2d", lambda nn: nn.LPPool2d(2, 2), (np.abs(f32(1, 2, 4, 4)) + 0.1,)),
    ("LPPool1d_p3", lambda nn: nn.LPPool1d(3, 3, stride=2), (np.abs(f32(1, 2, 9)) + 0.1,)),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(3), (f32(2, 3, 10),)),
    ("AvgPool1d_pad", lambda nn: nn.AvgPool1d(3, 2, padding=1), (f32(2, 3, 10),)),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2), (f32(2, 3, 8, 8),)),
    ("AvgPool2d_pad_nocount", lambda nn: nn.AvgPool2d(3, 2, 1, count_include_pad=False),
     (f32(2, 3, 7, 7),)),
    ("AvgPool2d_ceil", lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True), (f32(2, 3, 8, 8),)),
    ("AvgPool2d_ceil_nocount", lambda nn: nn.AvgPool2d(3, 2, 0, ceil_mode=True,
                                                       count_include_pad=False),
     (f32(1, 2, 8, 8),)),
    ("AvgPool2d_divisor", lambda nn: nn.AvgPool2d(2, divisor_override=3), (f32(1, 2, 4, 4),)),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(4), (f32(2, 3, 10),)),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((3, 2)), (f32(2, 3, 7, 5),)),
    ("AdaptiveAvgPool2d_1", lambda nn: nn.AdaptiveAvgPool2d(1), (f32(2, 3, 7, 5),)),
    ("AdaptiveAvgPool2d_None", lambda nn: nn.AdaptiveAvgPool2d((None, 2)),
     (f32(2, 3, 7, 5),)),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((3, 2)), (f32(2, 3, 7, 5),)),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(3), (f32(2, 3, 7),)),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), (f32(1, 2, 3, 3),)),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), (f32(1, 2, 3),)),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(2), (f32(1, 2, 4, 4),)),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((1, 3)), (f32(1, 2, 4),)),
    ("CircularPad2d", lambda nn: nn.CircularPad2d(1), (f32(1, 2, 3, 3),)),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), (f32(1, 8, 3, 3),)),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(2), (f32(1, 2, 4, 6),)),
    ("Upsample_nearest", lambda nn: nn.Upsample(scale_factor=2), (f32(1, 2, 3, 3),)),
    ("Upsample_bilinear", lambda nn: nn.Upsample(size=(5, 7), mode="bilinear"),
     (f32(1, 2, 3, 4),)),
    ("Upsample_bilinear_ac", lambda nn: nn.Upsample(scale_factor=2, mode="bilinear",
                                                    align_corners=True), (f32(1, 2, 3, 4),)),
    ("Upsample_linear", lambda nn: nn.Upsample(size=7, mode="linear"), (f32(1, 2, 4),)),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(), (f32(4, 5), f32(4, 5))),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(), (f32(4, 5), f32(4, 5))),
    ("Unfold", lambda nn: nn.Unfold(2, padding=1, stride=2), (f32(2, 3, 5, 5),)),
    ("Fold", lambda nn: nn.Fold((4, 5), 2), (f32(2, 12, 12),)),
]

LOSSES = [
    ("MSELoss", lambda nn: nn.MSELoss(), (f32(4, 5), f32(4, 5))),
    ("MSELoss_sum", lambda nn: nn.MSELoss(reduction="sum"), (f32(4, 5), f32(4, 5))),
    ("MSELoss_none", lambda nn: nn.MSELoss(reduction="none"), (f32(4, 5), f32(4, 5))),
    ("L1Loss", lambda nn: nn.L1Loss(), (f32(4, 5), f32(4, 5))),
    ("L1Loss_none", lambda nn: nn.L1Loss(reduction="none"), (f32(4, 5), f32(4, 5))),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(), (f32(4, 5, scale=2), f32(4, 5))),
    ("SmoothL1Loss_beta", lambda nn: nn.SmoothL1Loss(beta=0.5, reduction="sum"),
     (f32(4, 5, scale=2), f32(4, 5))),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.7), (f32(4, 5, scale=2), f32(4, 5))),
    ("CrossEntropy", lambda nn: nn.CrossEntropyLoss(), (f32(6, 4), ints(4, 6))),
    ("CrossEntropy_sum", lambda nn: nn.CrossEntropyLoss(reduction="sum"),
     (f32(6, 4), ints(4, 6))),
    ("CrossEntropy_none", lambda nn: nn.CrossEntropyLoss(reduction="none"),
     (f32(6, 4), ints(4, 6))),
    ("CrossEntropy_weight", lambda nn: nn.CrossEntropyLoss(
        weight=nn.Parameter(nn.parameter.Parameter.__mro__[1](np.array([1., 2., .5, 3.],
                                                                          np.float32))).data
        if False else None), (f32(6, 4), ints(4, 6))),
    ("CrossEntropy_ignore", lambda nn: nn.CrossEntropyLoss(ignore_index=1),
     (f32(6, 4), np.array([0, 1, 2, 1, 3, 0], np.int64))),
    ("CrossEntropy_smooth", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.2),
     (f32(6, 4), ints(4, 6))),
    ("CrossEntropy_smooth_ignore_none", lambda nn: nn.CrossEntropyLoss(
        label_smoothing=0.1, ignore_index=0, reduction="none"),
     (f32(6, 4), np.array([0, 1, 2, 1, 3, 0], np.int64))),
    ("CrossEntropy_probs", lambda nn: nn.CrossEntropyLoss(), (f32(5, 4), probs(5, 4))),
    ("CrossEntropy_probs_smooth", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.3,
                                                                 reduction="sum"),
     (f32(5, 4), probs(5, 4))),
    ("CrossEntropy_nd", lambda nn: nn.CrossEntropyLoss(), (f32(2, 4, 3, 3), ints(4, 2, 3, 3))),
    ("CrossEntropy_unbatched", lambda nn: nn.CrossEntropyLoss(),
     (f32(4), np.array(2, np.int64))),
    ("NLLLoss", lambda nn: nn.NLLLoss(), (f32(6, 4), ints(4, 6))),
    ("NLLLoss_ignore_sum", lambda nn: nn.NLLLoss(ignore_index=2, reduction="sum"),
     (f32(6, 4), np.array([0, 2, 2, 1, 3, 0], np.int64))),
    ("NLLLoss_nd_none", lambda nn: nn.NLLLoss(reduction="none"),
     (f32(2, 4, 3), ints(4, 2, 3))),
    ("BCELoss", lambda nn: nn.BCELoss(), (R.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
                                          R.uniform(0, 1, (4, 3)).astype(np.float32))),
    ("BCELoss_none", lambda nn: nn.BCELoss(reduction="none"),
     (R.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
      (R.uniform(0, 1, (4, 3)) > 0.5).astype(np.float32))),
    ("BCEWithLogits", lambda nn: nn.BCEWithLogitsLoss(), (f32(4, 3, scale=3),
                                                          R.uniform(0, 1, (4, 3)).astype(
                                                              np.float32))),
    ("KLDiv_batchmean", lambda nn: nn.KLDivLoss(reduction="batchmean"),
     (np.log(probs(4, 5)), probs(4, 5))),
    ("KLDiv_sum_logtarget", lambda nn: nn.KLDivLoss(reduction="sum", log_target=True),
     (np.log(probs(4, 5)), np.log(probs(4, 5)))),
    ("KLDiv_none", lambda nn: nn.KLDivLoss(reduction="none"),
     (np.log(probs(4, 5)), np.concatenate([np.zeros((1, 5), np.float32), probs(3, 5)]))),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(margin=0.1),
     (f32(5, 3), f32(5, 3), np.array([1, -1, 1, -1, -1], np.float32))),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.2),
     (f32(6), f32(6), np.array([1, -1, 1, -1, 1, 1], np.float32))),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(), (f32(4, 5), f32(4, 5), f32(4, 5))),
    ("TripletMarginLoss_swap", lambda nn: nn.TripletMarginLoss(margin=2.0, p=1, swap=True),
     (f32(4, 5), f32(4, 5), f32(4, 5))),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), (f32(4, 3), R.poisson(2, (4, 3)).astype(
        np.float32))),
    ("PoissonNLLLoss_full_nolog", lambda nn: nn.PoissonNLLLoss(log_input=False, full=True,
                                                              reduction="sum"),
     (R.uniform(0.5, 3, (4, 3)).astype(np.float32), R.poisson(2, (4, 3)).astype(np.float32))),
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(),
     (f32(4, 3), f32(4, 3), R.uniform(0.1, 2, (4, 3)).astype(np.float32))),
    ("GaussianNLLLoss_full_bcast", lambda nn: nn.GaussianNLLLoss(full=True, reduction="none"),
     (f32(4, 3), f32(4, 3), R.uniform(0.1, 2, (4, 1)).astype(np.float32))),
    ("GaussianNLLLoss_clamped", lambda nn: nn.GaussianNLLLoss(eps=0.5, reduction="sum"),
     (f32(4, 3), f32(4, 3), R.uniform(0.1, 1, (4, 3)).astype(np.float32))),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(margin=0.5),
     (f32(6), np.array([1, -1, 1, -1, -1, 1], np.float32))),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(),
     (f32(4, 3), (R.random((4, 3)) > 0.5).astype(np.float32))),
    ("MultiMarginLoss", lambda nn: nn.MultiMarginLoss(), (f32(5, 4), ints(4, 5))),
    ("MultiMarginLoss_p2", lambda nn: nn.MultiMarginLoss(p=2, margin=0.5, reduction="none"),
     (f32(5, 4), ints(4, 5))),
    ("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(),
     (f32(4, 5), f32(4, 5), f32(4, 5))),
    ("TripletMarginWithDistanceLoss_cos_swap", lambda nn: nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - nn.functional.cosine_similarity(a, b), swap=True,
        margin=0.5, reduction="none"), (f32(4, 5), f32(4, 5), f32(4, 5))),
    ("MultiLabelMarginLoss", lambda nn: nn.MultiLabelMarginLoss(),
     (f32(3, 4), np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]], np.int64))),
    ("MultiLabelMarginLoss_none", lambda nn: nn.MultiLabelMarginLoss(reduction="none"),
     (f32(2, 5), np.array([[4, 2, -1, 0, 0], [-1, 1, 2, 3, 4]], np.int64))),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(),
     (f32(6), np.array([1, -1, 1, -1, 1, 1], np.float32))),
]


def _ids(table):
    return [c[0] for c in table]


@pytest.mark.parametrize("name,ctor,inputs", ACTIVATIONS, ids=_ids(ACTIVATIONS))
def test_activation(name, ctor, inputs):
    compare_module(ctor, inputs)


@pytest.mark.parametrize("name,ctor,inputs", LAYERS, ids=_ids(LAYERS))
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_layer(name, ctor, inputs, train):
    compare_module(ctor, inputs, train=train, atol=1e-4, rtol=1e-4,
                   steps=2 if "BatchNorm" in name or "Instance" in name else 1)


NOGRAD_TARGET = {"CosineEmbeddingLoss": (2,), "MarginRankingLoss": (2,),
                 "SoftMarginLoss": (1,), "HingeEmbeddingLoss": (1,),
                 "MultiLabelSoftMarginLoss": (1,), "PoissonNLLLoss": (1,),
                 "PoissonNLLLoss_full_nolog": (1,)}


@pytest.mark.parametrize("name,ctor,inputs", LOSSES, ids=_ids(LOSSES))
def test_loss(name, ctor, inputs):
    compare_module(ctor, inputs, atol=1e-5, rtol=1e-4, nograd=NOGRAD_TARGET.get(name, ()))


# ------------------------------------------------------------------ weighted losses
W4 = np.array([1.0, 2.0, 0.5, 3.0], np.float32)


@pytest.mark.parametrize("kw", [
    dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=1),
    dict(label_smoothing=0.2), dict(label_smoothing=0.2, ignore_index=1),
    dict(label_smoothing=0.2, reduction="sum"), dict(label_smoothing=0.2, reduction="none"),
], ids=str)
def test_cross_entropy_weight(kw):
    x = f32(6, 4)
    y = np.array([0, 1, 2, 1, 3, 0], np.int64)
    compare_module(lambda nn: nn.CrossEntropyLoss(
        weight=(torch if nn is torch.nn else torchlike).tensor(W4), **kw), (x, y),
        check_buffers=False)


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.25), dict(reduction="none")],
                         ids=str)
def test_cross_entropy_probs_weight(kw):
    compare_module(lambda nn: nn.CrossEntropyLoss(
        weight=(torch if nn is torch.nn else torchlike).tensor(W4), **kw),
        (f32(5, 4), probs(5, 4)), check_buffers=False)


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_nll_weight(red):
    compare_module(lambda nn: nn.NLLLoss(
        weight=(torch if nn is torch.nn else torchlike).tensor(W4), reduction=red,
        ignore_index=3), (f32(6, 4), np.array([0, 1, 2, 1, 3, 0], np.int64)),
        check_buffers=False)


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_bce_weight(red):
    w = R.uniform(0.5, 2, (3,)).astype(np.float32)
    compare_module(lambda nn: nn.BCELoss(
        weight=(torch if nn is torch.nn else torchlike).tensor(w), reduction=red),
        (R.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
         R.uniform(0, 1, (4, 3)).astype(np.float32)), check_buffers=False)


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_bce_with_logits_pos_weight(red):
    pw = R.uniform(0.5, 3, (3,)).astype(np.float32)
    w = R.uniform(0.5, 2, (4, 3)).astype(np.float32)
    m = lambda nn: (torch if nn is torch.nn else torchlike)  # noqa: E731
    compare_module(lambda nn: nn.BCEWithLogitsLoss(weight=m(nn).tensor(w),
                                                   pos_weight=m(nn).tensor(pw), reduction=red),
                   (f32(4, 3, scale=3), R.uniform(0, 1, (4, 3)).astype(np.float32)),
                   check_buffers=False)
    compare_module(lambda nn: nn.BCEWithLogitsLoss(pos_weight=m(nn).tensor(pw), reduction=red),
                   (f32(4, 3, scale=3), R.uniform(0, 1, (4, 3)).astype(np.float32)),
                   check_buffers=False)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_offsets(mode, last):
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9], np.int64)
    off = np.array([0, 2, 2, 5] + ([8] if last else []), np.int64)
    compare_module(lambda nn: nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=last),
                   (idx, off))


def test_embedding_bag_per_sample_weights():
    idx = np.array([1, 2, 4, 5, 4, 3], np.int64)
    off = np.array([0, 2, 3], np.int64)
    psw = f32(6)
    compare_module(lambda nn: nn.EmbeddingBag(10, 3, mode="sum"), (idx, off, psw))


# ------------------------------------------------------------------ model-level

def test_small_cnn_train_eval():
    def ctor(nn):
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Dropout(0.0), nn.Linear(8, 3), nn.LogSoftmax(dim=1))
    x = f32(4, 1, 8, 8)
    compare_module(ctor, (x,), train=True, atol=1e-4, rtol=1e-4, steps=2)
    compare_module(ctor, (x,), train=False, atol=1e-4, rtol=1e-4)


def test_mlp_with_loss_and_manual_sgd():
    def run(lib, x, y):
        torch.manual_seed(0)
        return lib
    x, y = f32(16, 6), ints(3, 16)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    lm = torchlike.nn.Sequential(torchlike.nn.Linear(6, 8), torchlike.nn.Tanh(),
                                 torchlike.nn.Linear(8, 3))
    from nn_util import copy_state
    copy_state(tm, lm)
    tl, ll = torch.nn.CrossEntropyLoss(), torchlike.nn.CrossEntropyLoss()
    for _ in range(5):
        for m, lib, loss_fn in ((tm, torch, tl), (lm, torchlike, ll)):
            m.zero_grad()
            loss = loss_fn(m(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            with lib.no_grad():
                for p in m.parameters():
                    p -= 0.1 * p.grad
    from oracle import assert_close
    for (k, v), (k2, v2) in zip(lm.state_dict().items(), tm.state_dict().items()):
        assert k == k2
        assert_close(v, v2, 1e-5, 1e-4, k)


# ------------------------------------------------------------------ CTC

def _ctc_case(concat=False, impossible=False):
    T, N, C = 8, 3, 5
    logits = f32(T, N, C)
    tg = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 1]], np.int64)
    il = np.array([8, 6, 7], np.int64)
    tl = np.array([3, 2, 4], np.int64)
    if impossible:
        il = np.array([8, 2, 7], np.int64)      # 2 steps cannot emit "3 1"... with a repeat
        tg[1] = [3, 3, 3, 0]
        tl = np.array([3, 3, 4], np.int64)
    if concat:
        tg = np.concatenate([tg[i, :tl[i]] for i in range(N)])
    return logits, tg, il, tl


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
@pytest.mark.parametrize("through_log_softmax", [True, False])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_loss(red, through_log_softmax, concat):
    logits, tg, il, tl = _ctc_case(concat)
    if not through_log_softmax:
        logits = np.log(np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(
            np.float32)

    def call(m, x, tg, il, tl):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        lp = lib.nn.functional.log_softmax(x, 2) if through_log_softmax else x
        return m(lp, tg, il, tl)

    compare_module(lambda nn: nn.CTCLoss(reduction=red), (logits, tg, il, tl), call=call,
                   atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("zero_inf", [True])
def test_ctc_loss_impossible_alignment_zero_infinity(zero_inf):
    logits, tg, il, tl = _ctc_case(impossible=True)

    def call(m, x, tg, il, tl):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        return m(lib.nn.functional.log_softmax(x, 2), tg, il, tl)

    compare_module(lambda nn: nn.CTCLoss(blank=0, reduction="sum", zero_infinity=zero_inf),
                   (logits, tg, il, tl), call=call, atol=1e-5, rtol=1e-4)


def test_ctc_loss_unbatched_blank():
    T, C = 6, 4
    logits = f32(T, C)

    def call(m, x):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        return m(lib.nn.functional.log_softmax(x, 1), lib.tensor([0, 1, 1]),
                 lib.tensor(6), lib.tensor(3))

    compare_module(lambda nn: nn.CTCLoss(blank=3), (logits,), call=call, atol=1e-5, rtol=1e-4)


def test_conv_transpose_output_size():
    compare_module(lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1),
                   (f32(1, 2, 4, 5),), call=lambda m, x: m(x, output_size=[8, 10]),
                   atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("fn", [
    lambda F, x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
    lambda F, x: F.adaptive_max_pool2d(x, 4, return_indices=True),
    lambda F, x: F.adaptive_max_pool1d(x.flatten(2), 4, return_indices=True),
])
def test_adaptive_max_pool_indices(fn):
    x = np.round(R.random((2, 3, 7, 5)) * 3).astype(np.float32)     # with ties
    tx = torch.tensor(x, requires_grad=True)
    lx = torchlike.tensor(x, requires_grad=True)
    tv, ti = fn(torch.nn.functional, tx)
    lv, li = fn(torchlike.nn.functional, lx)
    np.testing.assert_array_equal(np.asarray(lv.detach()), tv.detach().numpy())
    np.testing.assert_array_equal(np.asarray(li), ti.numpy())
    tv.sum().backward()
    lv.sum().backward()
    np.testing.assert_array_equal(np.asarray(lx.grad), tx.grad.numpy())


@pytest.mark.parametrize("ctor", [
    lambda nn: nn.Embedding(10, 4, max_norm=1.0),
    lambda nn: nn.Embedding(10, 4, max_norm=0.5, norm_type=1.0, padding_idx=0),
    lambda nn: nn.EmbeddingBag(10, 4, max_norm=1.2, mode="sum"),
])
def test_embedding_max_norm_renormalises_weight(ctor):
    idx = np.array([[1, 2, 2], [0, 5, 9]], np.int64)
    tm, lm = compare_module(ctor, (idx,), steps=2)
    assert_close = __import__("oracle").assert_close
    assert_close(lm.weight, tm.weight, 1e-6, 1e-5, "renormalised weight")


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool_roundtrip(nd):
    shape = (2, 3, 8) if nd == 1 else (2, 3, 6, 4)

    def ctor(nn):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = (nn.MaxPool1d if nd == 1 else nn.MaxPool2d)(2, return_indices=True)
                self.unpool = (nn.MaxUnpool1d if nd == 1 else nn.MaxUnpool2d)(2)

            def forward(self, x):
                y, i = self.pool(x)
                return self.unpool(y * 2, i)
        return M()

    compare_module(ctor, (f32(*shape),))
    assert repr(ctor(torchlike.nn).unpool) == repr(ctor(torch.nn).unpool)


def test_pdist_and_with_indices_aliases():
    from oracle import Case, check
    check(Case("pdist", lambda m, x: m.nn.functional.pdist(x), (f32(5, 3),)))
    check(Case("pdist_p1", lambda m, x: m.nn.functional.pdist(x, p=1), (f32(4, 3),)))
    check(Case("mp_idx", lambda m, x: m.nn.functional.max_pool2d_with_indices(x, 2),
               (f32(1, 2, 4, 4),)))
    check(Case("amp_idx", lambda m, x: m.nn.functional.adaptive_max_pool1d_with_indices(x, 3),
               (f32(1, 2, 7),)))


def test_lazy_modules_materialize_like_torch():
    def ctor(nn):
        lib = torch if nn is torch.nn else torchlike
        m = nn.Sequential(nn.LazyConv2d(4, 3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
                          nn.Flatten(), nn.LazyLinear(3))
        with lib.no_grad():
            m(lib.zeros(1, 2, 4, 4))
        return m

    tm, lm = compare_module(ctor, (f32(2, 2, 4, 4),), atol=1e-4, rtol=1e-4)
    assert repr(lm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in lm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert type(lm[4].weight).__name__ == type(tm[4].weight).__name__ == "Parameter"
    # default initialisation bounds of the materialised Linear (fan_in = 64)
    w = np.asarray(torchlike.nn.LazyLinear(5)(torchlike.ones(2, 64)) is not None)
    lin = torchlike.nn.LazyLinear(50)
    lin(torchlike.ones(1, 64))
    a = np.asarray(lin.weight.detach())
    assert np.abs(a).max() <= 1 / 8 and np.abs(a).max() > 0.1
