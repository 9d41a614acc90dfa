"""The programs of pytorch/examples (word_language_model, mnist_rnn, time_sequence_prediction,
vae, dcgan, siamese_network, mnist_forward_forward, regression, reinforcement_learning,
fast_neural_style, super_resolution, language_translation, gat, imagenet's training utilities),
rewritten here with the same torch usage (modules, functional calls, tensor methods,
optimizers, schedulers, data handling, in-place idioms, printing, checkpoints) on tiny synthetic
data, run on torch and on torchlike from the same initial weights (torch's ``state_dict``
copied into torchlike): their losses, outputs, gradients, parameters and printed lines must
match torch's.

What the two libraries cannot share is drawn once by numpy and given to both: their random
streams differ (DIFFERENCES.md), so a program's noise (``randn``, a sampled action, a negative
label) is drawn with the library's own call, checked for shape and range, and replaced by the
numpy draw; a dropout module of a compared training run has ``p = 0`` (``_no_dropout``), and
its random masks are compared by their structure instead (``test_dropout_mask_structure``).
A printed line is compared with its numbers read back: the text around them must be the same,
each number within one unit of its last printed digit (float32 arithmetic may round a printed
digit the other way) or the run's relative tolerance.
"""
from __future__ import annotations

import builtins
import collections
import functools
import io
import math
import random
import re
import sys
import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch

import torchlike
from nn_util import copy_state
from oracle import assert_close

LIBS = (torch, torchlike)


# ------------------------------------------------------------------ helpers

class Printed:
    """A ``print`` a program calls: the lines it printed, in order."""

    def __init__(self):
        self.lines = []

    def __call__(self, *args, **kw):
        buf = io.StringIO()
        builtins.print(*args, file=buf, **kw)
        self.lines.extend(buf.getvalue().splitlines())


_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def _unit(s):
    """One unit of a printed number's last digit."""
    mant, _, exp = s.lower().partition("e")
    dec = len(mant.partition(".")[2])
    return 10.0 ** (int(exp or 0) - dec)


def same_text(ours, theirs, rtol=1e-5):
    """Two printed lines are the same text, their numbers within one unit of the last printed
    digit of torch's or ``rtol``."""
    assert _NUM.split(ours) == _NUM.split(theirs), f"{ours!r} != torch {theirs!r}"
    for a, b in zip(_NUM.findall(ours), _NUM.findall(theirs)):
        if a == b:
            continue
        fa, fb = float(a), float(b)
        assert abs(fa - fb) <= 1.01 * _unit(b) + rtol * abs(fb), \
            f"{a} != torch {b} in {ours!r} (torch {theirs!r})"


def same_lines(ours, theirs, rtol=1e-5):
    assert len(ours) == len(theirs), f"{len(ours)} lines, torch printed {len(theirs)}:\n" \
        + "\n".join(ours) + "\n--- torch:\n" + "\n".join(theirs)
    for a, b in zip(ours, theirs):
        same_text(a, b, rtol)


def _leaves(x, path="result"):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        yield (f"{path}:len", len(x))
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def same_results(ours, theirs, atol, rtol):
    """Nested results (tensors, numpy arrays, numbers, text) equal torch's: tensors by dtype,
    shape and value within the tolerances, floats within them, the rest exactly."""
    lo, to = list(_leaves(ours)), list(_leaves(theirs))
    assert [p for p, _ in lo] == [p for p, _ in to], "result structure differs"
    for (path, a), (_, b) in zip(lo, to):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torchlike.Tensor), f"{path}: {type(a)}"
            assert str(a.dtype) == str(b.dtype), f"{path}: dtype {a.dtype} != torch {b.dtype}"
            assert_close(a, b, atol, rtol, path)
        elif isinstance(b, np.ndarray):
            assert isinstance(a, np.ndarray) and a.dtype == b.dtype, f"{path}: {a!r}"
            assert_close(a, b, atol, rtol, path)
        elif isinstance(b, float):
            assert isinstance(a, float), f"{path}: {a!r} is not a float"
            assert abs(a - b) <= atol + rtol * abs(b) or a == b, f"{path}: {a} != torch {b}"
        elif isinstance(b, str):
            same_text(a, b, rtol)
        else:
            assert a == b, f"{path}: {a!r} != torch {b!r}"


def run_both(build, program, *, atol=1e-5, rtol=1e-4, print_rtol=None, seed=0):
    """``build(m)`` the program's model(s) in both libraries (torch's seeded, torchlike's given
    torch's weights through ``load_state_dict``), run ``program(m, models, print)`` on each and
    compare what it returns and prints. Returns both results."""
    torch.manual_seed(seed)
    tmodels = build(torch)
    lmodels = build(torchlike)
    for tm, lm in zip(_as_tuple(tmodels), _as_tuple(lmodels)):
        copy_state(tm, lm)
    out = {}
    for m, models in ((torch, tmodels), (torchlike, lmodels)):
        pr = Printed()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = program(m, models, pr)
        out[m] = (res, pr.lines)
    (tres, tlines), (lres, llines) = out[torch], out[torchlike]
    same_lines(llines, tlines, rtol if print_rtol is None else print_rtol)
    same_results(lres, tres, atol, rtol)
    return lres, tres


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _no_dropout(model, m):
    """Dropout off in a compared training run (the two random streams differ): every dropout
    module's ``p`` and every attention's ``dropout`` set to 0."""
    for mod in model.modules():
        if isinstance(mod, m.nn.modules.dropout._DropoutNd):
            mod.p = 0.0
        if isinstance(mod, m.nn.MultiheadAttention):
            mod.dropout = 0.0
        if isinstance(mod, m.nn.RNNBase):
            mod.dropout = 0.0
    return model


def module_level(cls, m):
    """A class made for library ``m`` by a factory, reachable by pickle as a module global (the
    examples save whole models with ``torch.save(model, f)``)."""
    name = f"{cls.__name__}_{'torch' if m is torch else 'torchlike'}"
    cls.__qualname__ = name
    cls.__module__ = __name__
    setattr(sys.modules[__name__], name, cls)
    return cls


def params_and_grads(model):
    return {k: (p.detach().clone(), None if p.grad is None else p.grad.clone())
            for k, p in model.named_parameters()}


# ------------------------------------------------------------------ word_language_model

@functools.cache
def word_lm(m):
    """word_language_model/model.py's classes, for library ``m``."""
    nn, F = m.nn, m.nn.functional

    class RNNModel(nn.Module):
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ['LSTM', 'GRU']:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type = rnn_type
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == 'LSTM':
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            else:
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = m.zeros(max_len, d_model)
            position = m.arange(0, max_len, dtype=m.float).unsqueeze(1)
            div_term = m.exp(m.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = m.sin(position * div_term)
            pe[:, 1::2] = m.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer('pe', pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead,
                                                   dim_feedforward=nhid,
                                                   num_encoder_layers=nlayers,
                                                   num_decoder_layers=1)
            self.model_type = 'Transformer'
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return m.log(m.tril(m.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)

    ns = {c.__name__: module_level(c, m)
          for c in (RNNModel, PositionalEncoding, TransformerModel)}
    return namedtuple("WordLM", ns)(**ns)


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


_WORDS = "the cat sat on a mat and the dog ran to a log while it rained".split()


def _text(seed, n_lines):
    r = np.random.default_rng(seed)
    return [" ".join(r.choice(_WORDS, size=int(r.integers(3, 8)))) for _ in range(n_lines)]


def corpus(m):
    """data.py's ``Corpus``: lines tokenized into int64 ids, one ``torch.cat`` a split."""
    d = Dictionary()
    splits = {}
    for name, seed, n in (("train", 0, 9), ("valid", 1, 5), ("test", 2, 5)):
        lines = _text(seed, n)
        for line in lines:
            for word in line.split() + ['<eos>']:
                d.add_word(word)
        idss = []
        for line in lines:
            ids = [d.word2idx[word] for word in line.split() + ['<eos>']]
            idss.append(m.tensor(ids).type(m.int64))
        splits[name] = m.cat(idss)
    return d, splits


WLM_ARGS = dict(emsize=8, nhid=8, nlayers=2, lr=20.0, clip=0.25, bptt=5, batch_size=4,
                log_interval=2)


def word_lm_program(m, model_type, tied, dropout, print, use_optimizer=False):
    """word_language_model/main.py: batchify, the training epoch with manual SGD after
    ``clip_grad_norm_`` (or AdamW), evaluate, save the whole model and load it back under
    ``torch.serialization.safe_globals``, and generate.py's sampling loop."""
    args = namedtuple("Args", WLM_ARGS)(**WLM_ARGS)
    W = word_lm(m)
    device = m.device("cpu")
    dictionary, splits = corpus(m)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)

    eval_batch_size = 2
    train_data = batchify(splits["train"], args.batch_size)
    val_data = batchify(splits["valid"], eval_batch_size)
    ntokens = len(dictionary)
    m.manual_seed(0)
    if model_type == 'Transformer':
        model = W.TransformerModel(ntokens, args.emsize, 2, args.nhid, args.nlayers,
                                   dropout).to(device)
    else:
        model = W.RNNModel(model_type, ntokens, args.emsize, args.nhid, args.nlayers, dropout,
                           tied).to(device)
    return model, locals()


def _word_lm_build(model_type, tied=False, dropout=0.0):
    def build(m):
        model, _ = word_lm_program(m, model_type, tied, dropout, None)
        return model
    return build


def _word_lm_run(model_type, tied=False, dropout=0.0, use_optimizer=False):
    def run(m, model, print):
        _, env = word_lm_program(m, model_type, tied, dropout, print)
        args, train_data, val_data, ntokens = (env[k] for k in
                                               ("args", "train_data", "val_data", "ntokens"))
        eval_batch_size = env["eval_batch_size"]
        W = word_lm(m)
        nn = m.nn
        device = env["device"]
        if dropout:
            _no_dropout(model, m)
        criterion = nn.NLLLoss()
        if use_optimizer:
            optimizer = m.optim.AdamW(model.parameters(), lr=0.01)

        def repackage_hidden(h):
            if isinstance(h, m.Tensor):
                return h.detach()
            else:
                return tuple(repackage_hidden(v) for v in h)

        def get_batch(source, i):
            seq_len = min(args.bptt, len(source) - 1 - i)
            data = source[i:i + seq_len]
            target = source[i + 1:i + 1 + seq_len].view(-1)
            return data, target

        def evaluate(data_source):
            model.eval()
            total_loss = 0.
            if model_type != 'Transformer':
                hidden = model.init_hidden(eval_batch_size)
            with m.no_grad():
                for i in range(0, data_source.size(0) - 1, args.bptt):
                    data, targets = get_batch(data_source, i)
                    if model_type == 'Transformer':
                        output = model(data)
                        output = output.view(-1, ntokens)
                    else:
                        output, hidden = model(data, hidden)
                        hidden = repackage_hidden(hidden)
                    total_loss += len(data) * criterion(output, targets).item()
            return total_loss / (len(data_source) - 1)

        lr = args.lr
        losses, norms = [], []

        def train(epoch):
            model.train()
            total_loss = 0.
            if model_type != 'Transformer':
                hidden = model.init_hidden(args.batch_size)
            for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
                data, targets = get_batch(train_data, i)
                if use_optimizer:
                    optimizer.zero_grad()
                else:
                    model.zero_grad()
                if model_type == 'Transformer':
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    hidden = repackage_hidden(hidden)
                    output, hidden = model(data, hidden)
                loss = criterion(output, targets)
                loss.backward()
                norms.append(m.nn.utils.clip_grad_norm_(model.parameters(), args.clip))
                if use_optimizer:
                    optimizer.step()
                else:
                    for p in model.parameters():
                        p.data.add_(p.grad, alpha=-lr)
                total_loss += loss.item()
                losses.append(loss.item())
                if batch % args.log_interval == 0 and batch > 0:
                    cur_loss = total_loss / args.log_interval
                    print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | '
                          'loss {:5.2f} | ppl {:8.2f}'.format(
                              epoch, batch, len(train_data) // args.bptt, lr,
                              cur_loss, math.exp(cur_loss)))
                    total_loss = 0

        best_val_loss = None
        vals = []
        for epoch in range(1, 3):
            train(epoch)
            val_loss = evaluate(val_data)
            vals.append(val_loss)
            print('-' * 89)
            print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
                epoch, val_loss, math.exp(val_loss)))
            if not best_val_loss or val_loss < best_val_loss:
                f = io.BytesIO()
                m.save(model, f)
                saved = f.getvalue()
                best_val_loss = val_loss
            else:
                lr /= 4.0
        # load the best saved model, as main.py does
        if model_type == 'Transformer':
            safe_globals = [
                W.PositionalEncoding, W.TransformerModel, m.nn.functional.relu,
                m.nn.modules.activation.MultiheadAttention, m.nn.modules.container.ModuleList,
                m.nn.modules.dropout.Dropout, m.nn.modules.linear.Linear,
                m.nn.modules.linear.NonDynamicallyQuantizableLinear,
                m.nn.modules.normalization.LayerNorm, m.nn.modules.sparse.Embedding,
                m.nn.modules.transformer.TransformerEncoder,
                m.nn.modules.transformer.TransformerEncoderLayer,
                m.nn.modules.transformer.TransformerDecoder,
                m.nn.modules.transformer.TransformerDecoderLayer,
            ]
        else:
            safe_globals = [
                W.RNNModel, m.nn.modules.dropout.Dropout, m.nn.modules.linear.Linear,
                m.nn.modules.rnn.GRU, m.nn.modules.rnn.LSTM, m.nn.modules.rnn.RNN,
                m.nn.modules.sparse.Embedding,
            ]
        with m.serialization.safe_globals(safe_globals):
            loaded = m.load(io.BytesIO(saved))
        if model_type in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
            loaded.rnn.flatten_parameters()
        model = loaded
        test_loss = evaluate(env["val_data"])
        print('=' * 89)
        print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(
            test_loss, math.exp(test_loss)))
        # generate.py: the sampled words are drawn by numpy (the streams differ); multinomial's
        # draw is checked for its range and shape
        model.eval()
        is_transformer_model = hasattr(model, 'model_type') and model.model_type == 'Transformer'
        if not is_transformer_model:
            hidden = model.init_hidden(1)
        input = m.tensor([[3]], dtype=m.long).to(device)
        picks = np.random.default_rng(5).integers(0, ntokens, size=6)
        words, weights = [], []
        with m.no_grad():
            for i in range(6):
                if is_transformer_model:
                    output = model(input, False)
                    word_weights = output[-1].squeeze().div(0.7).exp().cpu()
                    word_idx = m.multinomial(word_weights, 1)[0]
                    assert word_idx.dim() == 0 and 0 <= word_idx < ntokens
                    word_idx = m.tensor(picks[i])
                    word_tensor = m.Tensor([[word_idx]]).long().to(device)
                    input = m.cat([input, word_tensor], 0)
                else:
                    output, hidden = model(input, hidden)
                    word_weights = output.squeeze().div(0.7).exp().cpu()
                    word_idx = m.multinomial(word_weights, 1)[0]
                    assert word_idx.dim() == 0 and 0 <= word_idx < ntokens
                    word_idx = m.tensor(picks[i])
                    input.fill_(word_idx)
                words.append(env["dictionary"].idx2word[word_idx])
                weights.append(word_weights)
                if i % 3 == 0:
                    print('| Generated {}/{} words'.format(i, 6))
        return dict(losses=losses, norms=norms, vals=vals, words=words, weights=weights,
                    input=input, params=params_and_grads(model), test_loss=test_loss)
    return run


@pytest.mark.parametrize("model_type,tied", [
    ("LSTM", False), ("GRU", False), ("RNN_TANH", False), ("RNN_RELU", False), ("LSTM", True),
])
def test_word_language_model_rnn(model_type, tied):
    run_both(_word_lm_build(model_type, tied), _word_lm_run(model_type, tied),
             atol=2e-5, rtol=2e-4)


def test_word_language_model_transformer():
    run_both(_word_lm_build("Transformer", dropout=0.2),
             _word_lm_run("Transformer", dropout=0.2), atol=2e-5, rtol=2e-4)


def test_word_language_model_with_adamw():
    run_both(_word_lm_build("GRU"), _word_lm_run("GRU", use_optimizer=True),
             atol=2e-5, rtol=2e-4)


def test_word_language_model_eval_with_dropout_layers():
    """A model built with dropout 0.5 (between the LSTM layers too), evaluated: ``eval()``
    turns every dropout off."""
    def run(m, model, print):
        model.eval()
        _, env = word_lm_program(m, "LSTM", False, 0.5, print)
        data = env["val_data"]
        with m.no_grad():
            out, (h, c) = model(data, model.init_hidden(2))
        return out, h, c
    run_both(_word_lm_build("LSTM", dropout=0.5), run)


# ------------------------------------------------------------------ mnist_rnn

@functools.cache
def mnist_rnn(m):
    nn, F = m.nn, m.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.rnn = nn.LSTM(input_size=6, hidden_size=8, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(8)
            self.dropout1 = nn.Dropout2d(0.25)
            self.dropout2 = nn.Dropout2d(0.5)
            self.fc1 = nn.Linear(8, 8)
            self.fc2 = nn.Linear(8, 4)

        def forward(self, input):
            input = input.reshape(-1, 6, 6)
            output, hidden = self.rnn(input)
            output = output[:, -1, :]
            output = self.batchnorm(output)
            output = self.dropout1(output)
            output = self.fc1(output)
            output = F.relu(output)
            output = self.dropout2(output)
            output = self.fc2(output)
            output = F.log_softmax(output, dim=1)
            return output
    return Net


def _images(seed, n, shape, classes):
    r = np.random.default_rng(seed)
    x = r.random((n, *shape)).astype(np.float32)
    y = r.integers(0, classes, size=n)
    return x, y


def test_mnist_rnn():
    """mnist_rnn/main.py: LSTM(batch_first) + BatchNorm1d + Dropout2d on a 2-D input, nll_loss,
    Adadelta with StepLR, the test loop's ``argmax(keepdim=True)``/``eq``/``view_as`` count."""
    def run(m, model, print):
        F = m.nn.functional
        _no_dropout(model, m)
        D = m.utils.data
        x, y = _images(0, 12, (1, 6, 6), 4)
        train_loader = D.DataLoader(D.TensorDataset(m.tensor(x), m.tensor(y)), batch_size=4)
        test_loader = D.DataLoader(D.TensorDataset(m.tensor(x[:8] * 0.5), m.tensor(y[:8])),
                                   batch_size=5)
        optimizer = m.optim.Adadelta(model.parameters(), lr=0.1)
        scheduler = m.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        device = m.device("cpu")
        for epoch in range(1, 3):
            model.train()
            for batch_idx, (data, target) in enumerate(train_loader):
                data, target = data.to(device), target.to(device)
                optimizer.zero_grad()
                output = model(data)
                loss = F.nll_loss(output, target)
                loss.backward()
                optimizer.step()
                if batch_idx % 2 == 0:
                    print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                        epoch, batch_idx * len(data), len(train_loader.dataset),
                        100. * batch_idx / len(train_loader), loss.item()))
            model.eval()
            test_loss = 0
            correct = 0
            with m.no_grad():
                for data, target in test_loader:
                    output = model(data)
                    test_loss += F.nll_loss(output, target, reduction='sum').item()
                    pred = output.argmax(dim=1, keepdim=True)
                    correct += pred.eq(target.view_as(pred)).sum().item()
            test_loss /= len(test_loader.dataset)
            print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
                test_loss, correct, len(test_loader.dataset),
                100. * correct / len(test_loader.dataset)))
            scheduler.step()
        f = io.BytesIO()
        m.save(model.state_dict(), f)
        f.seek(0)
        sd = m.load(f)
        return (sd, scheduler.get_last_lr(), optimizer.state_dict()["state"][0],
                params_and_grads(model))
    run_both(lambda m: mnist_rnn(m)(), run, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cls,shape", [
    ("Dropout2d", (6, 5)), ("Dropout2d", (3, 4, 5)), ("Dropout2d", (2, 3, 4, 5)),
    ("Dropout1d", (4, 5)), ("Dropout1d", (2, 4, 5)), ("Dropout3d", (3, 2, 4, 5)),
    ("Dropout3d", (2, 3, 2, 2, 3)), ("Dropout", (4, 5)), ("AlphaDropout", (4, 5)),
    ("FeatureAlphaDropout", (2, 3, 4, 5)),
])
def test_dropout_mask_structure(cls, shape):
    """A dropout module's random mask differs between the libraries, not its structure: which
    dimensions one draw covers (mnist_rnn applies ``Dropout2d`` to a 2-D batch), the values
    kept (scaled by ``1/(1-p)``), the warning torch gives for the input's rank."""
    got = {}
    for m in LIBS:
        mod = getattr(m.nn, cls)(0.5)
        x = m.ones(shape) * 2.0
        m.manual_seed(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = mod(x)
        a = y.detach().numpy()
        got[m] = (a, sorted({str(i.message) for i in w}), str(y.dtype), tuple(y.shape))
    (ta, tw, tdt, tsh), (la, lw, ldt, lsh) = got[torch], got[torchlike]
    assert (lw, ldt, lsh) == (tw, tdt, tsh)
    # the dims along which torch's mask is constant, found from its output, hold for ours
    assert sorted(np.unique(la.round(5)).tolist()) <= sorted(
        set(np.unique(ta.round(5)).tolist()) | set(np.unique(la.round(5)).tolist()))
    for d in range(len(shape)):
        if shape[d] > 1:
            assert np.all(la == la.take([0], axis=d)) == np.all(ta == ta.take([0], axis=d)), \
                f"dim {d}: torch's mask {ta}, torchlike's {la}"
    assert set(np.unique(la.round(4))) <= set(np.unique(ta.round(4))) | {0.0}


# ------------------------------------------------------------------ time_sequence_prediction

@functools.cache
def sine_seq(m):
    nn = m.nn

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, 6)
            self.lstm2 = nn.LSTMCell(6, 6)
            self.linear = nn.Linear(6, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = m.zeros(input.size(0), 6, dtype=m.double)
            c_t = m.zeros(input.size(0), 6, dtype=m.double)
            h_t2 = m.zeros(input.size(0), 6, dtype=m.double)
            c_t2 = m.zeros(input.size(0), 6, dtype=m.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = m.cat(outputs, dim=1)
            return outputs
    return Sequence


def _sine_data():
    r = np.random.RandomState(2)
    T, L, N = 20, 8, 5
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + r.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype('float64')


def test_time_sequence_prediction():
    """time_sequence_prediction: the data file saved by ``torch.save`` of a numpy array (read
    back with ``weights_only=False``), two LSTMCells in float64 (``seq.double()``), LBFGS with
    a closure that prints, the no_grad prediction of future values and ``.detach().numpy()``."""
    def build(m):
        seq = sine_seq(m)()
        seq.double()
        return seq

    def run(m, seq, print):
        nn = m.nn
        f = io.BytesIO()
        m.save(_sine_data(), f)
        f.seek(0)
        data = m.load(f, weights_only=False)
        input = m.from_numpy(data[2:, :-1])
        target = m.from_numpy(data[2:, 1:])
        test_input = m.from_numpy(data[:2, :-1])
        test_target = m.from_numpy(data[:2, 1:])
        criterion = nn.MSELoss()
        optimizer = m.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
        preds = []
        for i in range(2):
            print('STEP: ', i)

            def closure():
                optimizer.zero_grad()
                out = seq(input)
                loss = criterion(out, target)
                print('loss:', loss.item())
                loss.backward()
                return loss
            optimizer.step(closure)
            with m.no_grad():
                future = 4
                pred = seq(test_input, future=future)
                loss = criterion(pred[:, :-future], test_target)
                print('test loss:', loss.item())
                y = pred.detach().numpy()
            preds.append(y)
        return preds, params_and_grads(seq), optimizer.state_dict()["state"][0]["d"]
    run_both(build, run, atol=1e-9, rtol=1e-7, print_rtol=1e-7)


def test_loading_a_numpy_array_needs_weights_only_false():
    """generate_sine_wave.py saves a numpy array; torch 2.6+ refuses to load it under the
    default ``weights_only=True`` (UnpicklingError), and loads it with ``weights_only=False``."""
    from oracle import same_as_torch

    def fn(m):
        f = io.BytesIO()
        m.save(_sine_data(), f)
        f.seek(0)
        return m.load(f)
    same_as_torch(fn, msg=False)


# ------------------------------------------------------------------ vae

@functools.cache
def vae(m):
    nn, F = m.nn, m.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc21 = nn.Linear(12, 3)
            self.fc22 = nn.Linear(12, 3)
            self.fc3 = nn.Linear(3, 12)
            self.fc4 = nn.Linear(12, 16)
            self.noise = None

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = m.exp(0.5 * logvar)
            eps = m.randn_like(std)
            assert eps.shape == std.shape and eps.dtype == std.dtype
            eps = m.tensor(self.noise.standard_normal(tuple(std.shape)).astype(np.float32))
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return m.sigmoid(self.fc4(h3))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar
    return VAE


def test_vae():
    """vae/main.py: the reparameterization (its noise from numpy), binary_cross_entropy with
    ``reduction='sum'`` plus the KL term, Adam, the per-sample loss printed, the test loop's
    ``torch.cat`` of inputs and reconstructions, decoding a sample."""
    def run(m, model, print):
        F = m.nn.functional
        D = m.utils.data
        model.noise = np.random.default_rng(3)
        x, y = _images(1, 10, (1, 4, 4), 3)
        train_loader = D.DataLoader(D.TensorDataset(m.tensor(x), m.tensor(y)), batch_size=4,
                                    shuffle=False)
        test_loader = D.DataLoader(D.TensorDataset(m.tensor(x[:6]), m.tensor(y[:6])),
                                   batch_size=4, shuffle=False)
        optimizer = m.optim.Adam(model.parameters(), lr=1e-3)

        def loss_function(recon_x, x, mu, logvar):
            BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction='sum')
            KLD = -0.5 * m.sum(1 + logvar - mu.pow(2) - logvar.exp())
            return BCE + KLD

        comparisons = []
        for epoch in range(1, 3):
            model.train()
            train_loss = 0
            for batch_idx, (data, _) in enumerate(train_loader):
                optimizer.zero_grad()
                recon_batch, mu, logvar = model(data)
                loss = loss_function(recon_batch, data, mu, logvar)
                loss.backward()
                train_loss += loss.item()
                optimizer.step()
                if batch_idx % 2 == 0:
                    print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                        epoch, batch_idx * len(data), len(train_loader.dataset),
                        100. * batch_idx / len(train_loader), loss.item() / len(data)))
            print('====> Epoch: {} Average loss: {:.4f}'.format(
                epoch, train_loss / len(train_loader.dataset)))
            model.eval()
            test_loss = 0
            with m.no_grad():
                for i, (data, _) in enumerate(test_loader):
                    recon_batch, mu, logvar = model(data)
                    test_loss += loss_function(recon_batch, data, mu, logvar).item()
                    if i == 0:
                        n = min(data.size(0), 3)
                        comparisons.append(m.cat([data[:n],
                                                  recon_batch.view(4, 1, 4, 4)[:n]]).cpu())
            test_loss /= len(test_loader.dataset)
            print('====> Test set loss: {:.4f}'.format(test_loss))
            with m.no_grad():
                sample = m.randn(5, 3)
                sample = m.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
                sample = model.decode(sample).cpu()
                comparisons.append(sample.view(5, 1, 4, 4))
        return comparisons, params_and_grads(model)
    run_both(lambda m: vae(m)(), run, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ regression

def test_regression():
    """regression/main.py: polynomial features by ``torch.cat`` of powers, ``x.mm(W) +
    b.item()``, smooth_l1_loss, the update ``param.data.add_(-0.1 * param.grad)``, and
    ``poly_desc`` formatting 0-d tensors with ``'{:+.2f}'``."""
    POLY_DEGREE = 4

    def build(m):
        return m.nn.Linear(POLY_DEGREE, 1)

    def run(m, fc, print):
        F = m.nn.functional
        r = np.random.default_rng(7)
        W_target = m.tensor(r.standard_normal((POLY_DEGREE, 1)).astype(np.float32)) * 5
        b_target = m.tensor(r.standard_normal(1).astype(np.float32)) * 5

        def make_features(x):
            x = x.unsqueeze(1)
            return m.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

        def f(x):
            return x.mm(W_target) + b_target.item()

        def poly_desc(W, b):
            result = 'y = '
            for i, w in enumerate(W):
                result += '{:+.2f} x^{} '.format(w, i + 1)
            result += '{:+.2f}'.format(b[0])
            return result

        def get_batch(batch_size=32):
            random = m.randn(batch_size)
            random = m.tensor(r.standard_normal(batch_size).astype(np.float32))
            x = make_features(random)
            y = f(x)
            return x, y

        losses = []
        for batch_idx in range(1, 40):
            batch_x, batch_y = get_batch()
            fc.zero_grad()
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            losses.append(loss)
            output.backward()
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
            if loss < 1e-3:
                break
        print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
        print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
        print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
        return losses, params_and_grads(fc)
    run_both(build, run, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ dcgan

NZ, NGF, NDF, NC = 4, 2, 2, 3


@functools.cache
def dcgan(m):
    nn = m.nn

    class Generator(nn.Module):
        def __init__(self, ngpu):
            super(Generator, self).__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.ConvTranspose2d(NZ, NGF * 8, 4, 1, 0, bias=False),
                nn.BatchNorm2d(NGF * 8),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 8, NGF * 4, 4, 2, 1, bias=False),
                nn.BatchNorm2d(NGF * 4),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(NGF * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 2, NC, 4, 2, 1, bias=False),
                nn.Tanh()
            )

        def forward(self, input):
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output

    class Discriminator(nn.Module):
        def __init__(self, ngpu):
            super(Discriminator, self).__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.Conv2d(NC, NDF, 4, 2, 1, bias=False),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(NDF * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False),
                nn.BatchNorm2d(NDF * 4),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF * 4, 1, 4, 1, 0, bias=False),
                nn.Sigmoid()
            )

        def forward(self, input):
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output.view(-1, 1).squeeze(1)

    def weights_init(mod):
        classname = mod.__class__.__name__
        if classname.find('Conv') != -1:
            m.nn.init.normal_(mod.weight, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            m.nn.init.normal_(mod.weight, 1.0, 0.02)
            m.nn.init.zeros_(mod.bias)
    return Generator, Discriminator, weights_init


def test_dcgan():
    """dcgan/main.py: the models printed, ``apply(weights_init)`` by class name, BCELoss on
    ``torch.full`` labels refilled in place, D's two backwards (the fake batch ``.detach()``ed),
    G's step through D, two Adams, the printed losses and D outputs, state_dicts saved and
    loaded back."""
    def build(m):
        G, D, weights_init = dcgan(m)
        netG = G(1)
        netG.apply(weights_init)
        netD = D(1)
        netD.apply(weights_init)
        return netG, netD

    def run(m, models, print):
        netG, netD = models
        nn, optim = m.nn, m.optim
        device = m.device("cpu")
        print(netG)
        print(netD)
        criterion = nn.BCELoss()
        r = np.random.default_rng(4)
        fixed_noise = m.randn(2, NZ, 1, 1, device=device)
        fixed_noise = m.tensor(r.standard_normal((2, NZ, 1, 1)).astype(np.float32))
        real_label = 1
        fake_label = 0
        optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
        optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
        x = np.tanh(r.standard_normal((6, NC, 32, 32))).astype(np.float32)
        dataloader = m.utils.data.DataLoader(
            m.utils.data.TensorDataset(m.tensor(x), m.zeros(6, dtype=m.long)), batch_size=3)
        fakes = []
        for epoch in range(1):
            for i, data in enumerate(dataloader, 0):
                netD.zero_grad()
                real_cpu = data[0].to(device)
                batch_size = real_cpu.size(0)
                label = m.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
                output = netD(real_cpu)
                errD_real = criterion(output, label)
                errD_real.backward()
                D_x = output.mean().item()
                noise = m.randn(batch_size, NZ, 1, 1, device=device)
                noise = m.tensor(r.standard_normal((batch_size, NZ, 1, 1)).astype(np.float32))
                fake = netG(noise)
                label.fill_(fake_label)
                output = netD(fake.detach())
                errD_fake = criterion(output, label)
                errD_fake.backward()
                D_G_z1 = output.mean().item()
                errD = errD_real + errD_fake
                optimizerD.step()
                netG.zero_grad()
                label.fill_(real_label)
                output = netD(fake)
                errG = criterion(output, label)
                errG.backward()
                D_G_z2 = output.mean().item()
                optimizerG.step()
                print('[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
                      % (epoch, 1, i, len(dataloader),
                         errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
                if i % 100 == 0:
                    fake = netG(fixed_noise)
                    fakes.append(fake.detach())
        f = io.BytesIO()
        m.save(netG.state_dict(), f)
        f.seek(0)
        G, _, _ = dcgan(m)
        netG2 = G(1)
        netG2.load_state_dict(m.load(f))
        return (fakes, params_and_grads(netG), params_and_grads(netD),
                dict(netG2.named_buffers()), netG2(fixed_noise))
    run_both(build, run, atol=1e-5, rtol=1e-4)
