"""Tutorial-style models, written once against a library ``lib`` (torch or torchlike):
same weights, same outputs, same parameter gradients."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import torchlike
from nn_util import compare_module

R = np.random.default_rng(11)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def lenet(nn):
    lib = torch if nn is torch.nn else torchlike
    F = nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return F.log_softmax(self.fc3(x), dim=1)

    return Net()


def dcgan(nn):
    class G(nn.Module):
        def __init__(self, nz=8, ngf=4):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, z):
            return self.main(z)

    class D(nn.Module):
        def __init__(self, ndf=4):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
                nn.Sigmoid())

        def forward(self, x):
            return self.main(x).view(-1, 1).squeeze(1)

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.g, self.d = G(), D()

        def forward(self, z):
            return self.d(self.g(z))

    return GAN()


def seq2seq(nn):
    lib = torch if nn is torch.nn else torchlike
    F = nn.functional

    class EncoderRNN(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embedding = nn.Embedding(vocab, hidden)
            self.gru = nn.GRU(hidden, hidden, batch_first=True)
            self.dropout = nn.Dropout(0.0)

        def forward(self, x):
            return self.gru(self.dropout(self.embedding(x)))

    class AttnDecoder(nn.Module):
        def __init__(self, hidden, vocab):
            super().__init__()
            self.embedding = nn.Embedding(vocab, hidden)
            self.Wa = nn.Linear(hidden, hidden)
            self.Ua = nn.Linear(hidden, hidden)
            self.Va = nn.Linear(hidden, 1)
            self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, enc_out, hidden, tokens):
            outs = []
            for i in range(tokens.shape[1]):
                emb = self.embedding(tokens[:, i:i + 1])
                q = hidden.permute(1, 0, 2)
                scores = self.Va(lib.tanh(self.Wa(q) + self.Ua(enc_out))).squeeze(2)
                w = F.softmax(scores, dim=-1).unsqueeze(1)
                ctx = lib.bmm(w, enc_out)
                o, hidden = self.gru(lib.cat((emb, ctx), dim=2), hidden)
                outs.append(self.out(o))
            return F.log_softmax(lib.cat(outs, dim=1), dim=-1)

    class S2S(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = EncoderRNN(12, 8)
            self.dec = AttnDecoder(8, 12)

        def forward(self, src, tgt):
            enc_out, h = self.enc(src)
            return self.dec(enc_out, h, tgt)

    return S2S()


def tiny_transformer(nn):
    lib = torch if nn is torch.nn else torchlike

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=50):
            super().__init__()
            position = lib.arange(max_len).unsqueeze(1)
            div_term = lib.exp(lib.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = lib.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = lib.sin(position * div_term)
            pe[:, 0, 1::2] = lib.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):
            return x + self.pe[:x.size(0)]

    class Model(nn.Module):
        def __init__(self, ntoken=20, d_model=16):
            super().__init__()
            self.pos = PositionalEncoding(d_model)
            self.emb = nn.Embedding(ntoken, d_model)
            layer = nn.TransformerEncoderLayer(d_model, 4, 32, dropout=0.0)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.d_model = d_model
            self.head = nn.Linear(d_model, ntoken)

        def forward(self, src):
            mask = nn.Transformer.generate_square_subsequent_mask(src.size(0))
            x = self.pos(self.emb(src) * math.sqrt(self.d_model))
            return self.head(self.encoder(x, mask, is_causal=True))

    return Model()


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_lenet(train):
    compare_module(lenet, (f32(3, 1, 32, 32),), train=train, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_dcgan(train):
    compare_module(dcgan, (f32(4, 8, 1, 1),), train=train, atol=1e-4, rtol=1e-4, steps=2)


def test_seq2seq_attention():
    src = R.integers(0, 12, (2, 5)).astype(np.int64)
    tgt = R.integers(0, 12, (2, 3)).astype(np.int64)
    compare_module(seq2seq, (src, tgt), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_tiny_transformer(train):
    src = R.integers(0, 20, (7, 3)).astype(np.int64)
    compare_module(tiny_transformer, (src,), train=train, atol=1e-4, rtol=1e-4)


def test_gradient_penalty_double_backward():
    """WGAN-GP style: the gradient of a gradient norm through conv/leaky_relu/linear/layernorm."""
    def ctor(nn):
        return nn.Sequential(nn.Conv2d(1, 2, 3), nn.LeakyReLU(0.2), nn.Flatten(),
                             nn.LayerNorm(4), nn.Linear(4, 1))

    def call(m, x):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        out = m(x)
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        return ((g.reshape(g.shape[0], -1).norm(2, dim=1) - 1) ** 2).mean()

    compare_module(ctor, (f32(3, 1, 4, 3),), call=call, atol=1e-5, rtol=1e-4)
