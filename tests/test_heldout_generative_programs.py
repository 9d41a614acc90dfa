"""Diffusion and generative-model programs (DDPM/DDIM schedules, training and sampling loops,
a tiny UNet, EMA of weights) run on torch and torchlike side by side with the same weights: the
same values, dtypes, shapes and errors (class and message)."""
from __future__ import annotations

import copy
import importlib
import math

import numpy as np
import pytest
import torch

import torchlike
import nn_util
from oracle import same_as_torch

R = np.random.default_rng(5)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def det_init(model, seed=0, scale=0.1):
    return nn_util.det_init(model, seed, scale)


def L(m, arrays):
    return [m.tensor(a) for a in arrays]


A = [f32(2, 3), f32(4)]
B = [f32(2, 3), f32(4)]
C = [np.abs(f32(2, 3)) + 0.5, np.abs(f32(4)) + 0.5]


def _inplace(m, name, *args, **kw):
    """The in-place form's result is ``self`` (the list given); the tensors after it."""
    a = L(m, A)
    out = getattr(m, name)(a, *args(m), **kw)
    return (out is a, *a)


# ------------------------------------------------------------------ torch._foreach_* (EMA)

FOREACH = {
    "mul_scalar": lambda m: m._foreach_mul(L(m, A), 0.5),
    "mul_scalars": lambda m: m._foreach_mul(L(m, A), [0.5, 2]),
    "mul_tensor": lambda m: m._foreach_mul(L(m, A), m.tensor(3.)),
    "mul_tensors": lambda m: m._foreach_mul(L(m, A), L(m, B)),
    "mul_": lambda m: _inplace(m, "_foreach_mul_", lambda m: (0.9,)),
    "add_alpha_": lambda m: _inplace(m, "_foreach_add_", lambda m: (L(m, B),), alpha=0.1),
    "add_tensor_alpha": lambda m: m._foreach_add(L(m, A), m.tensor(2.), alpha=0.1),
    "sub_": lambda m: _inplace(m, "_foreach_sub_", lambda m: (L(m, B),), alpha=2),
    "div_tensor_": lambda m: _inplace(m, "_foreach_div_", lambda m: (m.tensor(2.),)),
    "lerp_scalar": lambda m: m._foreach_lerp(L(m, A), L(m, B), 0.3),
    "lerp_scalars": lambda m: m._foreach_lerp(L(m, A), L(m, B), [0.3, 0.1]),
    "lerp_tensors": lambda m: m._foreach_lerp(L(m, A), L(m, B), L(m, C)),
    "lerp_tensor": lambda m: m._foreach_lerp(L(m, A), L(m, B), m.tensor(0.25)),
    "lerp_": lambda m: _inplace(m, "_foreach_lerp_", lambda m: (L(m, B), 0.3)),
    "addcmul": lambda m: m._foreach_addcmul(L(m, A), L(m, B), L(m, C), value=0.5),
    "addcdiv_scalars": lambda m: m._foreach_addcdiv(L(m, A), L(m, B), L(m, C), [0.5, 2.]),
    "addcdiv_tensor": lambda m: m._foreach_addcdiv(L(m, A), L(m, B), L(m, C),
                                                   m.tensor([0.5, 2.])),
    "norm": lambda m: m._foreach_norm(L(m, A)),
    "norm_1": lambda m: m._foreach_norm(L(m, A), 1),
    "norm_inf": lambda m: m._foreach_norm(L(m, A), float("inf")),
    "norm_dtype": lambda m: m._foreach_norm(L(m, A), 2, dtype=m.float64),
    "sqrt": lambda m: m._foreach_sqrt(L(m, C)),
    "sqrt_": lambda m: _inplace(m, "_foreach_abs_", lambda m: ()),
    "neg": lambda m: m._foreach_neg(L(m, A)),
    "sign": lambda m: m._foreach_sign(L(m, A)),
    "max": lambda m: m._foreach_max(L(m, A)),
    "maximum": lambda m: m._foreach_maximum(L(m, A), L(m, B)),
    "maximum_scalar": lambda m: m._foreach_maximum(L(m, A), 0.),
    "minimum_scalars": lambda m: m._foreach_minimum(L(m, A), [0., 0.5]),
    "clamp_min_": lambda m: _inplace(m, "_foreach_clamp_min_", lambda m: (0.,)),
    "pow_scalar": lambda m: m._foreach_pow(L(m, C), 2.),
    "pow_of_scalar": lambda m: m._foreach_pow(2., L(m, A)),
    "pow_tensors": lambda m: m._foreach_pow(L(m, C), L(m, A)),
    "copy_": lambda m: _inplace(m, "_foreach_copy_", lambda m: (L(m, B),)),
    "zero_": lambda m: _inplace(m, "_foreach_zero_", lambda m: ()),
    "clone": lambda m: m._foreach_clone(L(m, A)),
    "tuple_self_": lambda m: (lambda a: m._foreach_mul_(a, 2) is a)(tuple(L(m, A))),
    "mixed_dtypes": lambda m: m._foreach_mul([m.ones(2, dtype=m.long),
                                              m.ones(2, dtype=m.float16)], 2.5),
    "int_div": lambda m: m._foreach_div([m.ones(2, dtype=m.long)], 2),
    # errors
    "empty": lambda m: m._foreach_mul([], 2.),
    "lengths": lambda m: m._foreach_add(L(m, A), L(m, B)[:1]),
    "scalar_list_length": lambda m: m._foreach_add(L(m, A), [1.]),
    "tensor_not_0dim": lambda m: m._foreach_mul(L(m, A), m.ones(2)),
    "int_inplace_float": lambda m: m._foreach_add_([m.ones(2, dtype=m.long)], 1.5),
    "exp_int_inplace": lambda m: m._foreach_exp_([m.ones(2, dtype=m.long)]),
    "addcdiv_scalars_length": lambda m: m._foreach_addcdiv(L(m, A), L(m, B), L(m, C),
                                                           m.tensor([0.5, 2., 3.])),
    "norm_long": lambda m: m._foreach_norm([m.ones(2, dtype=m.long)]),
    "norm_ord_str": lambda m: m._foreach_norm(L(m, A), "fro"),
    "not_a_list": lambda m: m._foreach_mul(m.ones(2), 2),
    "str_scalar": lambda m: m._foreach_mul(L(m, A), "x"),
    "lerp_str": lambda m: m._foreach_lerp(L(m, A), L(m, B), "x"),
    "element_not_tensor": lambda m: m._foreach_mul([1.0], 2),
    "bool_sub": lambda m: m._foreach_sub([m.ones(1, dtype=m.bool)], 1),
    "shapes": lambda m: m._foreach_add([m.ones(2)], [m.ones(3)]),
    "alpha_with_scalar": lambda m: m._foreach_add(L(m, A), 2, alpha=0.1),
    "alpha_with_scalars": lambda m: m._foreach_add(L(m, A), [1, 2], alpha=2),
    "addcmul_str": lambda m: m._foreach_addcmul(L(m, A), L(m, B), L(m, C), "x"),
    "unary_not_a_list": lambda m: m._foreach_sqrt(m.ones(2)),
    "norm_not_a_list": lambda m: m._foreach_norm(m.ones(2)),
    "copy_src_not_a_list": lambda m: m._foreach_copy_(L(m, A), m.ones(2)),
    "clone_empty": lambda m: m._foreach_clone([]),
}


@pytest.mark.parametrize("case", list(FOREACH), ids=list(FOREACH))
def test_foreach_ops(case):
    same_as_torch(FOREACH[case], atol=1e-6, rtol=1e-6)


def test_foreach_gradients():
    def fn(m):
        a = [t.requires_grad_() for t in L(m, A)]
        out = m._foreach_mul(a, [2., 3.])
        out = m._foreach_lerp(out, L(m, B), 0.3)
        m.stack(m._foreach_norm(out)).sum().backward()
        return [t.grad for t in a]
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ a tiny UNet: train, sample

def _unet(m):
    nn = m.nn
    F = m.nn.functional

    class TimeEmbedding(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.d = d
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

        def forward(self, t):
            half = self.d // 2
            f = m.exp(-math.log(10000) * m.arange(half, device=t.device) / half)
            a = t[:, None].float() * f[None]
            return self.mlp(m.cat([a.sin(), a.cos()], -1))

    class Res(nn.Module):
        def __init__(self, ci, co, td):
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(2, ci), nn.Conv2d(ci, co, 3, padding=1)
            self.t, self.n2 = nn.Linear(td, co), nn.GroupNorm(2, co)
            self.drop, self.c2 = nn.Dropout(0.0), nn.Conv2d(co, co, 3, padding=1)
            self.skip = nn.Conv2d(ci, co, 1) if ci != co else nn.Identity()

        def forward(self, x, te):
            h = self.c1(F.silu(self.n1(x))) + self.t(te)[:, :, None, None]
            return self.c2(self.drop(F.silu(self.n2(h)))) + self.skip(x)

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.te, self.inc = TimeEmbedding(16), nn.Conv2d(3, 8, 3, padding=1)
            self.d1, self.down = Res(8, 8, 16), nn.Conv2d(8, 8, 3, 2, 1)
            self.mid = Res(8, 16, 16)
            self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                    nn.Conv2d(16, 8, 3, padding=1))
            self.u1 = Res(16, 8, 16)
            self.out = nn.Sequential(nn.GroupNorm(2, 8), nn.SiLU(), nn.Conv2d(8, 3, 3, padding=1))

        def forward(self, x, t):
            te = self.te(t)
            h0 = self.d1(self.inc(x), te)
            h = self.up(self.mid(self.down(h0), te))
            return self.out(self.u1(m.cat([h, h0], dim=1), te))
    return det_init(UNet())


X0 = f32(4, 3, 8, 8)
NOISE = f32(5, 4, 3, 8, 8)
STEPS = np.array([[1, 5, 9, 3], [0, 2, 4, 6], [9, 9, 1, 1], [3, 3, 3, 3], [7, 1, 2, 8]])


def test_ddpm_training_with_foreach_ema():
    """MSE to the noise, AdamW with LR warmup, clip_grad_norm_, and an EMA kept with
    ``_foreach_mul_`` / ``_foreach_add_`` (then a ``lerp_`` blend of two copies)."""
    def fn(m):
        model = _unet(m)
        ema = copy.deepcopy(model).eval().requires_grad_(False)
        ac = m.cumprod(1 - m.linspace(1e-4, 0.2, 10), 0)
        opt = m.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        sched = m.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
        x0, losses, norms = m.tensor(X0), [], []
        for i in range(len(STEPS)):
            t, n = m.tensor(STEPS[i]), m.tensor(NOISE[i])
            a = ac[t].view(-1, 1, 1, 1)
            loss = m.nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * n, t), n)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norms.append(m.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            opt.step()
            sched.step()
            with m.no_grad():
                ep = list(ema.parameters())
                m._foreach_mul_(ep, 0.9)
                m._foreach_add_(ep, list(model.parameters()), alpha=0.1)
            losses.append(loss.detach())
        blend = copy.deepcopy(model)
        with m.no_grad():
            for b, e in zip(blend.parameters(), ema.parameters()):
                b.lerp_(e, 0.5)
        return (m.stack(losses), m.stack(norms), *ema.parameters(), *blend.parameters(),
                sched.get_last_lr()[0])
    same_as_torch(fn, atol=2e-5, rtol=1e-3)


def test_ddim_sampling_with_classifier_free_guidance():
    """DDIM steps in inference_mode over a strided timestep sequence, guidance by ``chunk`` and
    ``lerp``, ``clamp``, and the uint8 image grid."""
    def fn(m):
        model = _unet(m).eval()
        ac = m.cumprod(1 - m.linspace(1e-4, 0.2, 10), 0)
        x = m.tensor(X0)
        seq = list(range(0, 10, 3))
        with m.inference_mode():
            for i, j in zip(reversed(seq), reversed([-1] + seq[:-1])):
                t = (m.ones(4) * i).long()
                at = ac.index_select(0, t).view(-1, 1, 1, 1)
                an = ac[max(j, 0)] if j >= 0 else m.tensor(1.0)
                e_cond, e_uncond = model(m.cat([x, x * 0.5]), m.cat([t, t])).chunk(2)
                e = e_uncond.lerp(e_cond, 3.0)
                x0 = ((x - e * (1 - at).sqrt()) / at.sqrt()).clamp(-1, 1)
                x = an.sqrt() * x0 + (1 - an).sqrt() * e
        img = (x.clamp(-1, 1) * 127.5 + 127.5).round().to(m.uint8)
        grid = img.view(2, 2, 3, 8, 8).permute(2, 0, 3, 1, 4).reshape(3, 16, 16)
        return x, grid, x.is_inference()
    same_as_torch(fn, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ _foreach_* node names

def _foreach_node_names(m):
    def L():
        return [m.tensor([0.6, 0.7], requires_grad=True) * 1]
    T, out = m.tensor(0.5), []

    def names(o):
        return o[0].grad_fn.name(), type(o[0].grad_fn).__name__

    for op in ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max",
               "pow"]:
        for other in (0.5, [0.5], T, L()):
            out.append(names(getattr(m, f"_foreach_{op}")(L(), other)))
            a = L()
            getattr(m, f"_foreach_{op}_")(a, other)
            out.append(names(a))
    out.append(names(m._foreach_add(L(), T, alpha=2)))
    out.append(names(m._foreach_sub(L(), L(), alpha=2)))
    for u in ["abs", "acos", "log10", "log1p", "expm1", "lgamma", "reciprocal", "rsqrt", "frac",
              "sqrt", "sigmoid", "neg", "sign"]:
        out.append(names(getattr(m, f"_foreach_{u}")(L())))
        a = L()
        getattr(m, f"_foreach_{u}_")(a)
        out.append(names(a))
    for op in ["addcmul", "addcdiv"]:
        for v in (0.5, [0.5]):
            out.append(names(getattr(m, f"_foreach_{op}")(L(), L(), L(), v)))
    for w in (0.5, [0.5], T, L()):
        out.append(names(m._foreach_lerp(L(), L(), w)))
        a = L()
        m._foreach_lerp_(a, L(), w)
        out.append(names(a))
    out += [names(m._foreach_norm(L())), names(m._foreach_max(L())),
            names(m._foreach_clone(L())), names(m._foreach_pow(2., L()))]
    return [n for pair in out for n in pair]


def test_foreach_grad_fn_names():
    same_as_torch(_foreach_node_names)


def test_lerp_tensor_weight_node_name():
    def fn(m):
        x = m.ones(2, requires_grad=True) * 1
        return (x.lerp(x, m.full((2,), 0.3)).grad_fn.name(),
                x.clone().lerp_(x, m.tensor(0.3)).grad_fn.name(),
                m.lerp(x, x, 0.3).grad_fn.name())
    same_as_torch(fn)


ZERO_DIM = {
    # a 0-dim tensor needing no grad is a Number to the ops without a Tensor overload (and to
    # add without alpha); one needing grad, or a 1-dim one, matches no overload of those
    "sub_0dim": lambda m, T: m._foreach_sub([m.ones(2)], T),
    "maximum_0dim": lambda m, T: m._foreach_maximum([m.ones(2)], T),
    "clamp_min_0dim_": lambda m, T: (lambda a: (m._foreach_clamp_min_(a, T), *a)[1:])(
        [m.zeros(2)]),
    "pow_0dim": lambda m, T: m._foreach_pow([m.ones(2) * 3], T),
    "lerp_0dim": lambda m, T: m._foreach_lerp([m.ones(2)], [m.zeros(2)], T),
    "add_0dim": lambda m, T: m._foreach_add([m.ones(2)], T),
    "add_0dim_alpha": lambda m, T: m._foreach_add([m.ones(2)], T, alpha=2),
    "mul_0dim": lambda m, T: m._foreach_mul([m.ones(2)], T),
    "sub_1dim": lambda m, T: m._foreach_sub([m.ones(2)], m.ones(1)),
    "maximum_1dim_": lambda m, T: m._foreach_maximum_([m.ones(2)], m.ones(1)),
    "pow_1dim": lambda m, T: m._foreach_pow([m.ones(2)], m.ones(1)),
    "pow_1dim_": lambda m, T: m._foreach_pow_([m.ones(2)], m.ones(1)),
    "lerp_1dim": lambda m, T: m._foreach_lerp([m.ones(2)], [m.ones(2)], m.ones(1)),
    "sub_alpha_tensor": lambda m, T: m._foreach_sub([m.ones(2)], T, alpha=2),
    "sub_alpha_number": lambda m, T: m._foreach_sub([m.ones(2)], 1.0, alpha=2),
    "add_str": lambda m, T: m._foreach_add([m.ones(2)], "x"),
    "maximum_tensors_": lambda m, T: (lambda a: (m._foreach_maximum_(a, [m.zeros(2)]), *a)[1:])(
        [m.tensor([-1., 2.])]),
}


@pytest.mark.parametrize("case", list(ZERO_DIM), ids=list(ZERO_DIM))
@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires_grad"])
def test_foreach_zero_dim_tensor_operands(case, grad):
    def fn(m):
        T = m.tensor(0.5, requires_grad=grad)
        out = ZERO_DIM[case](m, T)
        if grad and T.requires_grad:
            s = sum(o.sum() for o in out if o.requires_grad)
            if isinstance(s, (m.Tensor,)) and s.requires_grad:
                s.backward()
            return (*out, T.grad if T.grad is not None else m.tensor(-1.))
        return out
    same_as_torch(fn, atol=1e-6, rtol=1e-6)


NO_DERIVATIVE = {
    # the forms torch records no derivative for: a NotImplemented node whose backward raises
    "maximum_number_": lambda m, x: (lambda o: (m._foreach_maximum_(o, 0.5), o)[1])([x * 1]),
    "minimum_numbers_": lambda m, x: (lambda o: (m._foreach_minimum_(o, [0.5]), o)[1])([x * 1]),
    "maximum_tensors_": lambda m, x: (lambda o: (m._foreach_maximum_(o, [m.zeros(2)]), o)[1])(
        [x * 1]),
    "copy_into_graph": lambda m, x: (lambda o: (m._foreach_copy_(o, [m.ones(2)]), o)[1])(
        [x * 1]),
    "copy_from_graph": lambda m, x: (lambda o: (m._foreach_copy_(o, [x * 1]), o)[1])(
        [m.ones(2)]),
    "copy_broadcast_cast": lambda m, x: (lambda o: (m._foreach_copy_(o, [x * 1]), o)[1])(
        [m.ones(2, 2, dtype=m.float64)]),
    "copy_into_leaf": lambda m, x: (lambda o: (m._foreach_copy_(o, [x * 1]), o)[1])([x]),
    "copy_shapes": lambda m, x: (lambda o: (m._foreach_copy_(o, [x * 1]), o)[1])([m.ones(3)]),
    "addcmul_tensor_scalars": lambda m, x: m._foreach_addcmul([x * 1], [x], [x],
                                                              m.tensor([0.5])),
    "addcdiv_tensor_scalars_": lambda m, x: (lambda o: (
        m._foreach_addcdiv_(o, [x], [x], m.tensor([0.5])), o)[1])([x * 1]),
}


@pytest.mark.parametrize("case", list(NO_DERIVATIVE), ids=list(NO_DERIVATIVE))
@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_foreach_forms_without_a_derivative(case, backward):
    def fn(m):
        x = m.tensor([0.3, 0.8], requires_grad=True)
        o = NO_DERIVATIVE[case](m, x)
        g = o[0].grad_fn
        info = (g.name() if g is not None else None, type(g).__name__, o[0].requires_grad,
                o[0].detach(), o[0]._version)
        if backward:
            o[0].sum().backward()
            return x.grad
        return info
    same_as_torch(fn)


def test_foreach_forms_without_a_derivative_under_no_grad():
    """The EMA idiom: under no_grad the same forms just write."""
    def fn(m):
        x = m.tensor([0.3, 0.8], requires_grad=True)
        with m.no_grad():
            o = [x * 1]
            m._foreach_maximum_(o, 0.5)
            m._foreach_copy_(o, [x * 2])
            m._foreach_addcmul_(o, [x], [x], m.tensor([0.5]))
        return o[0], o[0].requires_grad, o[0]._version
    same_as_torch(fn)


# ------------------------------------------------------------------ VAE and GAN pieces

VX = f32(4, 1, 8, 8)
VEPS = f32(4, 6)


def test_vae_step_reparameterized():
    def fn(m):
        nn, F = m.nn, m.nn.functional
        enc = det_init(nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True),
                                     nn.Flatten(), nn.Linear(64, 12)))
        dec = det_init(nn.Sequential(nn.Linear(6, 64), nn.Unflatten(1, (4, 4, 4)), nn.ReLU(),
                                     nn.ConvTranspose2d(4, 1, 4, 2, 1)))
        x = m.sigmoid(m.tensor(VX))
        mu, logvar = enc(x).chunk(2, dim=1)
        z = mu + m.exp(0.5 * logvar) * m.tensor(VEPS)
        logits = dec(z)
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
        kld = -0.5 * m.sum(1 + logvar - mu.pow(2) - logvar.exp())
        (rec + kld).backward()
        return rec, kld, enc[0].weight.grad, dec[3].weight.grad
    same_as_torch(fn, atol=1e-4, rtol=1e-4)


def test_gan_step_with_spectral_norm_and_gradient_penalty():
    def fn(m):
        nn = m.nn
        G = det_init(nn.Sequential(nn.ConvTranspose2d(6, 8, 4, 1, 0, bias=False),
                                   nn.BatchNorm2d(8), nn.ReLU(True),
                                   nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn.Tanh()))
        D = det_init(nn.Sequential(nn.utils.spectral_norm(nn.Conv2d(1, 8, 4, 2, 1)),
                                   nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 1, 0), nn.Flatten()))
        with m.no_grad():
            D[0].weight_u.copy_(m.ones(8) / 8 ** 0.5)
            D[0].weight_v.copy_(m.ones(16) / 4)
        fake = G(m.tensor(VEPS)[:, :, None, None])
        real = m.tensor(VX).tanh()
        crit = nn.BCEWithLogitsLoss()
        dr, df = D(real), D(fake.detach())
        ld = crit(dr, m.ones_like(dr)) + crit(df, m.zeros_like(df))
        ld.backward()
        inter = (0.3 * real + 0.7 * fake.detach()).requires_grad_(True)
        g, = m.autograd.grad(D(inter).sum(), inter, create_graph=True)
        gp = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        gp.backward()
        return fake, ld, gp, G[1].running_mean, G[1].running_var, D[2].weight.grad
    same_as_torch(fn, atol=1e-4, rtol=1e-4)


PS = [np.array([0., -2., 3.], np.float32), np.array([1.5], np.float32)]
MM = [f32(2, 3), f32(1, 2)], [f32(3, 2), f32(2, 2)]
POWSUM_MM = {
    **{f"powsum_{o}": (lambda o: lambda m: m._foreach_powsum(L(m, PS), o))(o)
       for o in (0, 0.5, -1, 2, 3, float("inf"))},
    "powsum_dtype": lambda m: m._foreach_powsum(L(m, PS), 2, dtype=m.float64),
    "powsum_int": lambda m: m._foreach_powsum([m.tensor([1, 2], dtype=m.int32)], 2),
    "powsum_bool": lambda m: m._foreach_powsum([m.tensor([True])], 2),
    "powsum_ord_str": lambda m: m._foreach_powsum(L(m, PS), "x"),
    "powsum_node": lambda m: (lambda o: (o[0].grad_fn.name(), type(o[0].grad_fn).__name__,
                                         o[0]))(m._foreach_powsum([m.ones(2, requires_grad=True)],
                                                                  2)),
    "powsum_backward": lambda m: m._foreach_powsum([m.ones(2, requires_grad=True)],
                                                   2)[0].backward(),
    "mm": lambda m: m._foreach_mm(L(m, MM[0]), L(m, MM[1])),
    "mm_grad": lambda m: (lambda x: (lambda o: (o[0].grad_fn.name(), type(o[0].grad_fn).__name__,
                                                o[0].sum().backward(), x[0].grad)[::3])(
        m._foreach_mm(x, x)))([m.ones(2, 2, requires_grad=True)]),
    "mm_shapes": lambda m: m._foreach_mm([m.ones(2, 3)], [m.ones(2, 3)]),
    "mm_dtypes": lambda m: m._foreach_mm([m.ones(2, 3)], [m.ones(3, 2, dtype=m.float64)]),
    "mm_lengths": lambda m: m._foreach_mm([m.ones(2, 3)], [m.ones(3, 2)] * 2),
    "mm_empty": lambda m: m._foreach_mm([], []),
}


@pytest.mark.parametrize("case", list(POWSUM_MM), ids=list(POWSUM_MM))
def test_foreach_powsum_and_mm(case):
    same_as_torch(POWSUM_MM[case], atol=1e-6, rtol=1e-6)


# ------------------------------------------------------------------ GradScaler's kernels

def test_amp_unscale_and_update_scale_kernels():
    """A hand-written loss scaler: unscale with the non-finite check, then the scale update
    over clean and overflowing steps."""
    def fn(m):
        g = [m.tensor([2., 4.]), m.tensor([float("inf"), 1.]),
             m.tensor([1., 2.], dtype=m.float16)]
        fi, inv = m.zeros(1), m.tensor(0.5)
        r = m._amp_foreach_non_finite_check_and_unscale_(g[:1], fi, inv)
        clean = fi.clone()
        m._amp_foreach_non_finite_check_and_unscale_(g, fi, inv)
        fi_nan = m.zeros(1)
        m._amp_foreach_non_finite_check_and_unscale_(
            [m.tensor([float("nan")], dtype=m.bfloat16)], fi_nan, m.tensor([0.25]))
        s, gt, out = m.tensor([8.]), m.tensor([0], dtype=m.int32), []
        for f in (0, 0, 0, 1, 0, 0, 0):
            out += [m._amp_update_scale_(s, gt, m.full((1,), float(f)), 2.0, 0.5, 2) is s,
                    s.clone(), gt.clone()]
        s2, gt2 = m.tensor([1e38]), m.tensor([1], dtype=m.int32)
        m._amp_update_scale_(s2, gt2, m.zeros(1), 10., .5, 2)    # (grown to inf: kept)
        return (r is None, *g, clean, fi, fi_nan, *out, s2, gt2)
    same_as_torch(fn)


AMP_ERRORS = {
    "found_inf_numel": lambda m: m._amp_foreach_non_finite_check_and_unscale_(
        [m.ones(2)], m.zeros(2), m.tensor(0.5)),
    "inv_scale_numel": lambda m: m._amp_foreach_non_finite_check_and_unscale_(
        [m.ones(2)], m.zeros(1), m.tensor([0.5, 1.])),
    "inv_scale_dtype": lambda m: m._amp_foreach_non_finite_check_and_unscale_(
        [m.ones(2)], m.zeros(1), m.tensor(0.5, dtype=m.float64)),
    "found_inf_dtype": lambda m: m._amp_foreach_non_finite_check_and_unscale_(
        [m.ones(2)], m.zeros(1, dtype=m.float64), m.tensor(0.5)),
    "integer_grads": lambda m: m._amp_foreach_non_finite_check_and_unscale_(
        [m.ones(2, dtype=m.int32)], m.zeros(1), m.tensor(0.5)),
    "tracker_dtype": lambda m: m._amp_update_scale_(
        m.tensor([8.]), m.tensor([0]), m.zeros(1), 2., .5, 2),
    "scale_dtype": lambda m: m._amp_update_scale_(
        m.tensor([8.], dtype=m.float64), m.tensor([0], dtype=m.int32), m.zeros(1), 2., .5, 2),
    "scale_numel": lambda m: m._amp_update_scale_(
        m.ones(2), m.tensor([0], dtype=m.int32), m.zeros(1), 2., .5, 2),
    "tracker_numel": lambda m: m._amp_update_scale_(
        m.tensor([8.]), m.zeros(2, dtype=m.int32), m.zeros(1), 2., .5, 2),
}


@pytest.mark.parametrize("case", list(AMP_ERRORS), ids=list(AMP_ERRORS))
def test_amp_kernel_errors(case):
    same_as_torch(AMP_ERRORS[case])


def test_foreach_node_repr():
    """A node's repr names its class, as torch's (CppFunction for most foreach nodes)."""
    def fn(m):
        o = m._foreach_mul([m.ones(2, requires_grad=True)], 2.)
        return repr(o[0].grad_fn).split(" object")[0]
    same_as_torch(fn)
