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

import collections
import functools
import io
import math
import random
import re
import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch

import torchlike
import programs_against_torch as _programs
from programs_against_torch import Printed, params_and_grads, run_both, same_lines, same_results

LIBS = (torch, torchlike)


# ------------------------------------------------------------------ helpers

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
    """``programs_against_torch.module_level`` into this module (pickle finds the class)."""
    return _programs.module_level(cls, m, __name__)


def without_key_biases(params):
    """``params_and_grads`` less the key part of every attention's ``in_proj_bias``: it adds a
    constant to each query's scores, which softmax ignores, so its gradient is zero up to
    rounding and Adam's normalized steps move it by ``lr`` either way."""
    out = {}
    for k, (p, g) in params.items():
        if k.endswith("in_proj_bias"):
            e = p.shape[0] // 3
            keep = list(range(e)) + list(range(2 * e, 3 * e))
            p, g = p[keep], (None if g is None else g[keep])
        out[k] = (p, g)
    return out


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


# ------------------------------------------------------------------ siamese_network

@functools.cache
def siamese(m):
    nn = m.nn

    class BasicBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    class TinyResNet(nn.Module):
        """torchvision's resnet18 layout, one block: conv1, bn1, relu, maxpool, layer1,
        avgpool, fc."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = nn.Sequential(BasicBlock(4))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(4, 10)

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super(SiameseNetwork, self).__init__()
            self.resnet = TinyResNet()
            self.resnet.conv1 = nn.Conv2d(1, 4, kernel_size=(7, 7), stride=(2, 2),
                                          padding=(3, 3), bias=False)
            self.fc_in_features = self.resnet.fc.in_features
            self.resnet = m.nn.Sequential(*(list(self.resnet.children())[:-1]))
            self.fc = nn.Sequential(
                nn.Linear(self.fc_in_features * 2, 6),
                nn.ReLU(inplace=True),
                nn.Linear(6, 1),
            )
            self.sigmoid = nn.Sigmoid()
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)

        def init_weights(self, mod):
            if isinstance(mod, nn.Linear):
                m.nn.init.xavier_uniform_(mod.weight)
                mod.bias.data.fill_(0.01)

        def forward_once(self, x):
            output = self.resnet(x)
            output = output.view(output.size()[0], -1)
            return output

        def forward(self, input1, input2):
            output1 = self.forward_once(input1)
            output2 = self.forward_once(input2)
            output = m.cat((output1, output2), 1)
            output = self.fc(output)
            output = self.sigmoid(output)
            return output

    class APP_MATCHER(m.utils.data.Dataset):
        def __init__(self, images, targets):
            super(APP_MATCHER, self).__init__()
            self.targets = targets
            self.data = images.unsqueeze(1).clone()
            self.group_examples()

        def group_examples(self):
            np_arr = np.array(self.targets.clone(), dtype=None, copy=None)
            self.grouped_examples = {}
            for i in range(0, 3):
                self.grouped_examples[i] = np.where((np_arr == i))[0]

        def __len__(self):
            return self.data.shape[0]

        def __getitem__(self, index):
            selected_class = random.randint(0, 2)
            random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)
            index_1 = self.grouped_examples[selected_class][random_index_1]
            image_1 = self.data[index_1].clone().float()
            if index % 2 == 0:
                random_index_2 = random.randint(
                    0, self.grouped_examples[selected_class].shape[0] - 1)
                while random_index_2 == random_index_1:
                    random_index_2 = random.randint(
                        0, self.grouped_examples[selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = m.tensor(1, dtype=m.float)
            else:
                other_selected_class = random.randint(0, 2)
                while other_selected_class == selected_class:
                    other_selected_class = random.randint(0, 2)
                random_index_2 = random.randint(
                    0, self.grouped_examples[other_selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[other_selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = m.tensor(0, dtype=m.float)
            return image_1, image_2, target
    return SiameseNetwork, APP_MATCHER


def test_siamese_network():
    """siamese_network/main.py: a resnet's children but its last in ``nn.Sequential``,
    ``apply`` of xavier_uniform_ and ``bias.data.fill_``, a Dataset grouping uint8 images by
    class with ``np.array(tensor, dtype=None, copy=None)`` and indexing them with numpy ints
    (Python's ``random``, seeded alike), BCELoss on ``squeeze()``d outputs, Adadelta with
    StepLR, the test count with ``torch.where(outputs > 0.5, 1, 0)``."""
    def run(m, model, print):
        nn = m.nn
        Net, APP_MATCHER = siamese(m)
        r = np.random.default_rng(8)
        imgs = m.tensor(r.integers(0, 256, size=(8, 12, 12), dtype=np.uint8))
        targets = m.tensor(np.arange(8) % 3)
        random.seed(3)
        train_loader = m.utils.data.DataLoader(APP_MATCHER(imgs, targets), batch_size=4)
        test_loader = m.utils.data.DataLoader(APP_MATCHER(imgs[:6], targets[:6]), batch_size=3)
        optimizer = m.optim.Adadelta(model.parameters(), lr=1.0)
        scheduler = m.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        device = m.device("cpu")
        outs = []
        for epoch in range(1, 3):
            model.train()
            criterion = nn.BCELoss()
            for batch_idx, (images_1, images_2, targets_) in enumerate(train_loader):
                images_1, images_2, targets_ = (images_1.to(device), images_2.to(device),
                                                targets_.to(device))
                optimizer.zero_grad()
                outputs = model(images_1 / 255, images_2 / 255).squeeze()
                loss = criterion(outputs, targets_)
                loss.backward()
                optimizer.step()
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(images_1), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))
            model.eval()
            test_loss = 0
            correct = 0
            with m.no_grad():
                for (images_1, images_2, targets_) in test_loader:
                    outputs = model(images_1 / 255, images_2 / 255).squeeze()
                    test_loss += criterion(outputs, targets_).sum().item()
                    pred = m.where(outputs > 0.5, 1, 0)
                    correct += pred.eq(targets_.view_as(pred)).sum().item()
                    outs.append((outputs, pred))
            test_loss /= len(test_loader.dataset)
            print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
                test_loss, correct, len(test_loader.dataset),
                100. * correct / len(test_loader.dataset)))
            scheduler.step()
        return outs, params_and_grads(model), dict(model.named_buffers())
    run_both(lambda m: siamese(m)[0](), run, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ mnist_forward_forward

def forward_forward(m, args, device, print):
    """mnist_forward_forward/main.py's functions and classes, for library ``m``."""
    nn = m.nn
    picks = iter(np.random.default_rng(9).integers(0, 100, size=1000).tolist())

    def get_y_neg(y):
        y_neg = y.clone()
        for idx, y_samp in enumerate(y):
            allowed_indices = list(range(10))
            allowed_indices.remove(y_samp.item())
            drawn = m.randint(len(allowed_indices), size=(1,))
            assert drawn.dtype == m.int64 and 0 <= drawn.item() < len(allowed_indices)
            drawn = m.tensor([next(picks) % len(allowed_indices)])
            y_neg[idx] = m.tensor(allowed_indices)[drawn].item()
        return y_neg.to(device)

    def overlay_y_on_x(x, y, classes=10):
        x_ = x.clone()
        x_[:, :classes] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Net(m.nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = []
            for d in range(len(dims) - 1):
                self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

        def predict(self, x):
            goodness_per_label = []
            for label in range(10):
                h = overlay_y_on_x(x, label)
                goodness = []
                for layer in self.layers:
                    h = layer(h)
                    goodness = goodness + [h.pow(2).mean(1)]
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            goodness_per_label = m.cat(goodness_per_label, 1)
            return goodness_per_label.argmax(1)

        def train(self, x_pos, x_neg):
            h_pos, h_neg = x_pos, x_neg
            for i, layer in enumerate(self.layers):
                print("training layer: ", i)
                h_pos, h_neg = layer.train(h_pos, h_neg)

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias, device, dtype)
            self.relu = m.nn.ReLU()
            self.opt = m.optim.Adam(self.parameters(), lr=args["lr"])
            self.threshold = args["threshold"]
            self.num_epochs = args["epochs"]

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(m.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def train(self, x_pos, x_neg):
            for i in range(self.num_epochs):
                g_pos = self.forward(x_pos).pow(2).mean(1)
                g_neg = self.forward(x_neg).pow(2).mean(1)
                loss = m.log1p(
                    m.exp(
                        m.cat([-g_pos + self.threshold, g_neg - self.threshold])
                    )
                ).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                if i % args["log_interval"] == 0:
                    print("Loss: ", loss.item())
            return self.forward(x_pos).detach(), self.forward(x_neg).detach()
    return get_y_neg, overlay_y_on_x, Net


def test_mnist_forward_forward():
    """mnist_forward_forward: layers subclassing ``nn.Linear`` (its positional ``bias, device,
    dtype``) that own an Adam and override ``train``, a Net overriding ``train`` with a plain
    list of layers, labels written into the input with ``x_[range(n), y] = x.max()``, the
    negative labels by indexing a tensor with a one-element tensor, the goodness ``sum`` of
    Python's, printed ``loss.item()``s in full."""
    args = dict(lr=0.03, threshold=2.0, epochs=6, log_interval=2)
    dims = [20, 12, 12]
    r = np.random.default_rng(10)
    x0 = r.standard_normal((8, 20)).astype(np.float32)
    y0 = r.integers(0, 10, 8)
    xt = r.standard_normal((5, 20)).astype(np.float32)
    yt = r.integers(0, 10, 5)
    weights = [(r.standard_normal((o, i)).astype(np.float32) * 0.3,
                r.standard_normal(o).astype(np.float32) * 0.1) for i, o in zip(dims, dims[1:])]
    got = {}
    for m in LIBS:
        pr = Printed()
        device = m.device("cpu")
        get_y_neg, overlay_y_on_x, Net = forward_forward(m, args, device, pr)
        net = Net(dims)
        with m.no_grad():
            for layer, (w, b) in zip(net.layers, weights):
                layer.weight.copy_(m.tensor(w))
                layer.bias.copy_(m.tensor(b))
        x, y = m.tensor(x0), m.tensor(y0)
        x_pos = overlay_y_on_x(x, y)
        y_neg = get_y_neg(y)
        x_neg = overlay_y_on_x(x, y_neg)
        net.train(x_pos, x_neg)
        pr("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
        x_te, y_te = m.tensor(xt), m.tensor(yt)
        pr("test error:", 1.0 - net.predict(x_te).eq(y_te).float().mean().item())
        got[m] = (pr.lines, [x_pos, x_neg, y_neg, net.predict(x_te)]
                  + [p for layer in net.layers for p in layer.parameters()]
                  + [net.layers[0].training, len(list(net.parameters()))])
    same_lines(got[torchlike][0], got[torch][0], rtol=1e-5)
    same_results(got[torchlike][1], got[torch][1], atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ reinforcement_learning

class LineWorld:
    """A deterministic stand-in for gym's CartPole: a float64 state, a reward of 1 a step,
    ``terminated`` once the position leaves [-1, 1]."""

    def __init__(self):
        self.state = None

    def reset(self, seed=None):
        self.state = np.array([0.02, -0.01, 0.03, 0.01])
        return self.state, {}

    def step(self, action):
        s = self.state
        push = 0.3 if action == 1 else -0.25
        self.state = np.array([s[0] + 0.1 * s[1], s[1] + push, s[2] - 0.05 * s[0], 0.9 * s[3]])
        terminated = abs(self.state[0]) > 1.0
        return self.state, 1.0, terminated, False, {}


@functools.cache
def rl_policies(m):
    nn, F = m.nn, m.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 16)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(16, 2)
            self.saved_log_probs = []
            self.rewards = []

        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 16)
            self.action_head = nn.Linear(16, 2)
            self.value_head = nn.Linear(16, 1)
            self.saved_actions = []
            self.rewards = []

        def forward(self, x):
            x = F.relu(self.affine1(x))
            action_prob = F.softmax(self.action_head(x), dim=-1)
            state_values = self.value_head(x)
            return action_prob, state_values
    return Policy, ActorCritic


SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


def _planned_actions(n_episodes):
    r = np.random.default_rng(12)
    return [r.integers(0, 2, size=40).tolist() for _ in range(n_episodes)]


@pytest.mark.parametrize("variant", ["reinforce", "actor_critic"])
def test_reinforcement_learning(variant):
    """reinforcement_learning/reinforce.py and actor_critic.py: ``Categorical(probs)``, its
    ``sample`` (checked; the actions come from numpy, the streams differ) and ``log_prob``, the
    discounted returns in a deque or list made a tensor and normalized with numpy's float32
    ``eps``, ``torch.cat``/``torch.stack`` of the per-step losses, smooth_l1_loss against
    ``torch.tensor([R])`` of a 0-d tensor, ``del model.rewards[:]``, the f-string reports."""
    gamma = 0.99

    def run(m, policy, print):
        F = m.nn.functional
        Categorical = m.distributions.Categorical
        _no_dropout(policy, m)
        optimizer = m.optim.Adam(policy.parameters(), lr=1e-2)
        eps = np.finfo(np.float32).eps.item()
        env = LineWorld()
        plans = _planned_actions(4)
        record = []

        def select_action(state, plan):
            if variant == "reinforce":
                state = m.from_numpy(state).float().unsqueeze(0)
                probs = policy(state)
            else:
                state = m.from_numpy(state).float()
                probs, state_value = policy(state)
            dist = Categorical(probs)
            action = dist.sample()
            assert action.shape == probs.shape[:-1] and action.dtype == m.int64
            action = m.full_like(action, plan)
            if variant == "reinforce":
                policy.saved_log_probs.append(dist.log_prob(action))
            else:
                policy.saved_actions.append(SavedAction(dist.log_prob(action), state_value))
            record.append((probs, dist.entropy(), dist.logits))
            return action.item()

        def finish_episode():
            R = 0
            if variant == "reinforce":
                policy_loss = []
                returns = collections.deque()
                for r in policy.rewards[::-1]:
                    R = r + gamma * R
                    returns.appendleft(R)
                returns = m.tensor(returns)
                returns = (returns - returns.mean()) / (returns.std() + eps)
                for log_prob, R in zip(policy.saved_log_probs, returns):
                    policy_loss.append(-log_prob * R)
                optimizer.zero_grad()
                loss = m.cat(policy_loss).sum()
            else:
                saved_actions = policy.saved_actions
                policy_losses = []
                value_losses = []
                returns = []
                for r in policy.rewards[::-1]:
                    R = r + gamma * R
                    returns.insert(0, R)
                returns = m.tensor(returns)
                returns = (returns - returns.mean()) / (returns.std() + eps)
                for (log_prob, value), R in zip(saved_actions, returns):
                    advantage = R - value.item()
                    policy_losses.append(-log_prob * advantage)
                    value_losses.append(F.smooth_l1_loss(value, m.tensor([R])))
                optimizer.zero_grad()
                loss = m.stack(policy_losses).sum() + m.stack(value_losses).sum()
            loss.backward()
            optimizer.step()
            del policy.rewards[:]
            if variant == "reinforce":
                del policy.saved_log_probs[:]
            else:
                del policy.saved_actions[:]
            return loss, returns

        running_reward = 10
        losses = []
        for i_episode, plan in enumerate(plans, 1):
            state, _ = env.reset()
            ep_reward = 0
            for t in range(1, 40):
                action = select_action(state, plan[t])
                state, reward, terminated, truncated, _ = env.step(action)
                policy.rewards.append(reward)
                ep_reward += reward
                if terminated or truncated:
                    break
            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
            losses.append(finish_episode())
            print(f'Episode {i_episode}\tLast reward: {ep_reward:.2f}\t'
                  f'Average reward: {running_reward:.2f}')
        return losses, record, params_and_grads(policy)

    Policy, ActorCritic = rl_policies(torch)
    idx = 0 if variant == "reinforce" else 1
    run_both(lambda m: rl_policies(m)[idx](), run, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ fast_neural_style

@functools.cache
def neural_style(m):
    nn = m.nn

    class ConvLayer(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride):
            super(ConvLayer, self).__init__()
            reflection_padding = kernel_size // 2
            self.reflection_pad = m.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = m.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):
            out = self.reflection_pad(x)
            out = self.conv2d(out)
            return out

    class ResidualBlock(nn.Module):
        def __init__(self, channels):
            super(ResidualBlock, self).__init__()
            self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in1 = m.nn.InstanceNorm2d(channels, affine=True)
            self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in2 = m.nn.InstanceNorm2d(channels, affine=True)
            self.relu = m.nn.ReLU()

        def forward(self, x):
            residual = x
            out = self.relu(self.in1(self.conv1(x)))
            out = self.in2(self.conv2(out))
            out = out + residual
            return out

    class UpsampleConvLayer(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
            super(UpsampleConvLayer, self).__init__()
            self.upsample = upsample
            reflection_padding = kernel_size // 2
            self.reflection_pad = m.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = m.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):
            x_in = x
            if self.upsample:
                x_in = m.nn.functional.interpolate(x_in, mode='nearest',
                                                   scale_factor=self.upsample)
            out = self.reflection_pad(x_in)
            out = self.conv2d(out)
            return out

    class TransformerNet(nn.Module):
        def __init__(self):
            super(TransformerNet, self).__init__()
            self.conv1 = ConvLayer(3, 4, kernel_size=9, stride=1)
            self.in1 = m.nn.InstanceNorm2d(4, affine=True)
            self.conv2 = ConvLayer(4, 6, kernel_size=3, stride=2)
            self.in2 = m.nn.InstanceNorm2d(6, affine=True)
            self.res1 = ResidualBlock(6)
            self.deconv1 = UpsampleConvLayer(6, 4, kernel_size=3, stride=1, upsample=2)
            self.in4 = m.nn.InstanceNorm2d(4, affine=True)
            self.deconv3 = ConvLayer(4, 3, kernel_size=9, stride=1)
            self.relu = m.nn.ReLU()

        def forward(self, X):
            y = self.relu(self.in1(self.conv1(X)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.res1(y)
            y = self.relu(self.in4(self.deconv1(y)))
            y = self.deconv3(y)
            return y

    class Vgg(nn.Module):
        """vgg.py's slices over a features ``Sequential``, frozen, a namedtuple out."""

        def __init__(self, features, requires_grad=False):
            super().__init__()
            self.slice1 = m.nn.Sequential()
            self.slice2 = m.nn.Sequential()
            for x in range(2):
                self.slice1.add_module(str(x), features[x])
            for x in range(2, 5):
                self.slice2.add_module(str(x), features[x])
            if not requires_grad:
                for param in self.parameters():
                    param.requires_grad = False

        def forward(self, X):
            h = self.slice1(X)
            h_relu1_2 = h
            h = self.slice2(h)
            h_relu2_2 = h
            vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2'])
            return vgg_outputs(h_relu1_2, h_relu2_2)

    def features():
        return m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1), m.nn.ReLU(inplace=True),
                               m.nn.MaxPool2d(kernel_size=2, stride=2),
                               m.nn.Conv2d(4, 5, 3, padding=1), m.nn.ReLU(inplace=True))
    return TransformerNet, Vgg, features


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def test_fast_neural_style():
    """fast_neural_style: reflection padding, InstanceNorm2d(affine), nearest ``interpolate``
    by a scale factor, a frozen feature net's namedtuple outputs, gram matrices by ``bmm``,
    ``normalize_batch``'s ``new_tensor`` and in-place ``div_`` of the network's output, the
    float ``style_loss`` accumulated with ``+=`` and scaled with ``*=``, Adam, the checkpoint
    with ``eval().cpu()`` and ``to(device).train()``, and stylize's load of a state_dict from
    which the old InstanceNorm running-stat keys are deleted by regex."""
    def build(m):
        T, Vgg, features = neural_style(m)
        return T(), features()

    def run(m, models, print):
        transformer, feats = models
        T, Vgg, _ = neural_style(m)
        device = m.device("cpu")
        r = np.random.default_rng(13)
        x_all = (r.random((4, 3, 16, 16)) * 255).astype(np.float32)
        train_loader = m.utils.data.DataLoader(
            m.utils.data.TensorDataset(m.tensor(x_all), m.zeros(4)), batch_size=2)
        optimizer = m.optim.Adam(transformer.parameters(), 1e-3)
        mse_loss = m.nn.MSELoss()
        vgg = Vgg(feats, requires_grad=False).to(device)
        style = m.tensor((r.random((3, 16, 16)) * 255).astype(np.float32))
        style = style.repeat(2, 1, 1, 1).to(device)
        features_style = vgg(normalize_batch(style))
        gram_style = [gram_matrix(y) for y in features_style]
        checkpoints = []
        for e in range(2):
            transformer.train()
            agg_content_loss = 0.
            agg_style_loss = 0.
            count = 0
            for batch_id, (x, _) in enumerate(train_loader):
                n_batch = len(x)
                count += n_batch
                optimizer.zero_grad()
                x = x.to(device)
                y = transformer(x)
                y = normalize_batch(y)
                x = normalize_batch(x)
                features_y = vgg(y)
                features_x = vgg(x)
                content_loss = 1e5 * mse_loss(features_y.relu2_2, features_x.relu2_2)
                style_loss = 0.
                for ft_y, gm_s in zip(features_y, gram_style):
                    gm_y = gram_matrix(ft_y)
                    style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
                style_loss *= 1e10
                total_loss = content_loss + style_loss
                total_loss.backward()
                optimizer.step()
                agg_content_loss += content_loss.item()
                agg_style_loss += style_loss.item()
                mesg = "Epoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                    e + 1, count, len(train_loader.dataset),
                    agg_content_loss / (batch_id + 1), agg_style_loss / (batch_id + 1),
                    (agg_content_loss + agg_style_loss) / (batch_id + 1))
                print(mesg)
                if (batch_id + 1) % 2 == 0:
                    transformer.eval().cpu()
                    f = io.BytesIO()
                    m.save(transformer.state_dict(), f)
                    checkpoints.append(f.getvalue())
                    transformer.to(device).train()
        # stylize
        content_image = m.tensor((r.random((3, 16, 16)) * 255).astype(np.float32))
        content_image = content_image.unsqueeze(0).to(device)
        with m.no_grad():
            style_model = T()
            state_dict = m.load(io.BytesIO(checkpoints[-1]))
            state_dict["in1.running_mean"] = m.zeros(4)   # a checkpoint from before 0.4
            state_dict["res1.in2.running_var"] = m.ones(6)
            for k in list(state_dict.keys()):
                if re.search(r'in\d+\.running_(mean|var)$', k):
                    del state_dict[k]
            style_model.load_state_dict(state_dict)
            style_model.to(device)
            style_model.eval()
            output = style_model(content_image).cpu()
        img = output[0].clone().clamp(0, 255).numpy()
        img = img.transpose(1, 2, 0)
        # a per-channel constant feeding an InstanceNorm (a conv's bias; the residual block's
        # last bias, through the upsampling, reflection padding and conv that keep a constant
        # constant) has a zero gradient up to rounding, which Adam's normalized steps turn
        # into moves of ``lr`` either way: not compared
        params = {k: v for k, v in params_and_grads(transformer).items()
                  if not re.fullmatch(r"(conv\d|res1\.conv\d|deconv1)\.conv2d\.bias|"
                                      r"res1\.in2\.bias", k)}
        return (output, img, sorted(state_dict), params,
                [p.requires_grad for p in vgg.parameters()])
    run_both(build, run, atol=1e-4, rtol=1e-4)


def test_instance_norm_loads_a_checkpoint_with_running_stats():
    """Loading a pre-0.4 checkpoint that keeps InstanceNorm running stats (the keys
    fast_neural_style deletes first): torch's error message, and ``strict=False`` drops them."""
    from oracle import same_as_torch

    def fn(m, strict):
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.InstanceNorm2d(4, affine=True))
        sd = net.state_dict()
        sd["1.running_mean"] = m.zeros(4)
        sd["1.running_var"] = m.ones(4)
        res = net.load_state_dict(sd, strict=strict)
        return str(res)
    same_as_torch(lambda m: fn(m, True))
    same_as_torch(lambda m: fn(m, False))


# ------------------------------------------------------------------ super_resolution

@functools.cache
def super_res(m):
    nn, init = m.nn, m.nn.init

    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super(Net, self).__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 6, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(6, 6, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(6, 4, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(4, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self._initialize_weights()

        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x

        def _initialize_weights(self):
            init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv4.weight)
    return module_level(Net, m)


def test_super_resolution():
    """super_resolution: orthogonal init with ``calculate_gain('relu')``, PixelShuffle, MSELoss
    and Adam, the PSNR by ``log10(1 / mse.item())``, the whole model saved and loaded back
    under ``safe_globals``, and super_resolve.py's ``view(1, -1, h, w)`` input and numpy
    post-processing of ``out[0].detach().numpy()``."""
    from math import log10

    def run(m, model, print):
        Net = super_res(m)
        device = m.device("cpu")
        r = np.random.default_rng(14)
        hi = r.random((4, 1, 12, 12)).astype(np.float32)
        lo = hi.reshape(4, 1, 6, 2, 6, 2).mean((3, 5))
        D = m.utils.data
        training_data_loader = D.DataLoader(dataset=D.TensorDataset(m.tensor(lo), m.tensor(hi)),
                                            num_workers=0, batch_size=2, shuffle=False)
        testing_data_loader = D.DataLoader(dataset=D.TensorDataset(m.tensor(lo), m.tensor(hi)),
                                           batch_size=3, shuffle=False)
        criterion = m.nn.MSELoss()
        optimizer = m.optim.Adam(model.parameters(), lr=0.01)
        saved = None
        for epoch in range(1, 3):
            epoch_loss = 0
            for iteration, batch in enumerate(training_data_loader, 1):
                input, target = batch[0].to(device), batch[1].to(device)
                optimizer.zero_grad()
                loss = criterion(model(input), target)
                epoch_loss += loss.item()
                loss.backward()
                optimizer.step()
                print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(
                    epoch, iteration, len(training_data_loader), loss.item()))
            print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(
                epoch, epoch_loss / len(training_data_loader)))
            avg_psnr = 0
            with m.no_grad():
                for batch in testing_data_loader:
                    input, target = batch[0].to(device), batch[1].to(device)
                    prediction = model(input)
                    mse = criterion(prediction, target)
                    psnr = 10 * log10(1 / mse.item())
                    avg_psnr += psnr
            print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
            f = io.BytesIO()
            m.save(model, f)
            saved = f.getvalue()
            print("Checkpoint saved to {}".format("model_epoch_{}.pth".format(epoch)))
        safe_globals = [Net, m.nn.modules.activation.ReLU, m.nn.modules.conv.Conv2d,
                        m.nn.modules.pixelshuffle.PixelShuffle]
        with m.serialization.safe_globals(safe_globals):
            loaded = m.load(io.BytesIO(saved))
        input = m.tensor(lo[0]).view(1, -1, 6, 6)
        out = loaded(input)
        out = out.cpu()
        out_img_y = out[0].detach().numpy()
        out_img_y *= 255.0
        out_img_y = out_img_y.clip(0, 255)
        return out_img_y, params_and_grads(model), type(loaded).__name__
    run_both(lambda m: super_res(m)(2), run, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ language_translation

@functools.cache
def translator(m):
    nn = m.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=64):
            super(PositionalEncoding, self).__init__()
            den = m.exp(- m.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = m.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = m.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = m.sin(pos * den)
            pos_embedding[:, 1::2] = m.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)

        def forward(self, token_embedding):
            return self.dropout(token_embedding
                                + self.pos_embedding[:token_embedding.size(0), :])

    class Translator(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, embed_size, num_heads,
                     src_vocab_size, tgt_vocab_size, dim_feedforward, dropout):
            super(Translator, self).__init__()
            self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
            self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)
            self.pos_enc = PositionalEncoding(embed_size, dropout)
            self.transformer = nn.Transformer(
                d_model=embed_size, nhead=num_heads, num_encoder_layers=num_encoder_layers,
                num_decoder_layers=num_decoder_layers, dim_feedforward=dim_feedforward,
                dropout=dropout)
            self.ff = nn.Linear(embed_size, tgt_vocab_size)
            self._init_weights()

        def _init_weights(self):
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    memory_key_padding_mask):
            src_emb = self.pos_enc(self.src_embedding(src))
            tgt_emb = self.pos_enc(self.tgt_embedding(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.ff(outs)

        def encode(self, src, src_mask):
            embed = self.src_embedding(src)
            pos_enc = self.pos_enc(embed)
            return self.transformer.encoder(pos_enc, src_mask)

        def decode(self, tgt, memory, tgt_mask):
            embed = self.tgt_embedding(tgt)
            pos_enc = self.pos_enc(embed)
            return self.transformer.decoder(pos_enc, memory, tgt_mask)
    return Translator


def test_language_translation():
    """language_translation: ``pad_sequence`` in a collate_fn, ``nn.Transformer`` called with
    positional masks (a float causal mask, a bool zero mask, bool padding masks), the
    encoder/decoder used alone, CrossEntropyLoss with ``ignore_index``, Adam with ``betas`` and
    ``eps=1e-9``, ``len(list(dataloader))``, and greedy decoding with ``torch.max(dim=1)``,
    ``type_as(src.data).fill_(next_word)`` and a bool causal mask."""
    PAD, BOS, EOS = 1, 2, 3

    def build(m):
        return translator(m)(1, 1, 8, 2, 11, 12, 16, 0.0)

    def run(m, model, print):
        from_rnn = m.nn.utils.rnn
        DEVICE = m.device("cpu")

        def generate_square_subsequent_mask(size, device):
            mask = (m.triu(m.ones((size, size), device=device)) == 1).transpose(0, 1)
            mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(
                mask == 1, float(0.0))
            return mask

        def create_mask(src, tgt, pad_idx, device):
            src_seq_len = src.shape[0]
            tgt_seq_len = tgt.shape[0]
            tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
            src_mask = m.zeros((src_seq_len, src_seq_len), device=device).type(m.bool)
            src_padding_mask = (src == pad_idx).transpose(0, 1)
            tgt_padding_mask = (tgt == pad_idx).transpose(0, 1)
            return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

        def tensor_transform(token_ids):
            return m.cat((m.tensor([BOS]), m.tensor(token_ids), m.tensor([EOS])))

        def collate_fn(batch):
            src_batch, tgt_batch = [], []
            for src_sample, tgt_sample in batch:
                src_batch.append(tensor_transform(src_sample))
                tgt_batch.append(tensor_transform(tgt_sample))
            src_batch = from_rnn.pad_sequence(src_batch, padding_value=PAD)
            tgt_batch = from_rnn.pad_sequence(tgt_batch, padding_value=PAD)
            return src_batch, tgt_batch

        r = np.random.default_rng(15)
        pairs = [(r.integers(4, 11, size=int(r.integers(2, 6))).tolist(),
                  r.integers(4, 12, size=int(r.integers(2, 6))).tolist()) for _ in range(6)]
        train_dl = m.utils.data.DataLoader(pairs, batch_size=3, collate_fn=collate_fn)
        loss_fn = m.nn.CrossEntropyLoss(ignore_index=PAD)
        optim = m.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
        for epoch in range(1, 3):
            losses = 0
            model.train()
            for src, tgt in train_dl:
                src = src.to(DEVICE)
                tgt = tgt.to(DEVICE)
                tgt_input = tgt[:-1, :]
                src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(
                    src, tgt_input, PAD, DEVICE)
                logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                               tgt_padding_mask, src_padding_mask)
                optim.zero_grad()
                tgt_out = tgt[1:, :]
                loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
                loss.backward()
                optim.step()
                losses += loss.item()
            train_loss = losses / len(list(train_dl))
            model.eval()
            losses = 0
            with m.no_grad():
                for src, tgt in train_dl:
                    tgt_input = tgt[:-1, :]
                    masks = create_mask(src, tgt_input, PAD, DEVICE)
                    logits = model(src, tgt_input, *masks, masks[2])
                    loss = loss_fn(logits.reshape(-1, logits.shape[-1]),
                                   tgt[1:, :].reshape(-1))
                    losses += loss.item()
            val_loss = losses / len(list(train_dl))
            print(f"Epoch: {epoch}\n\tTrain loss: {train_loss:.3f}\n\tVal loss: {val_loss:.3f}")

        def greedy_decode(model, src, src_mask, max_len, start_symbol, end_symbol):
            src = src.to(DEVICE)
            src_mask = src_mask.to(DEVICE)
            memory = model.encode(src, src_mask)
            ys = m.ones(1, 1).fill_(start_symbol).type(m.long).to(DEVICE)
            for _ in range(max_len - 1):
                memory = memory.to(DEVICE)
                tgt_mask = (generate_square_subsequent_mask(ys.size(0), DEVICE)
                            .type(m.bool)).to(DEVICE)
                out = model.decode(ys, memory, tgt_mask)
                out = out.transpose(0, 1)
                prob = model.ff(out[:, -1])
                _, next_word = m.max(prob, dim=1)
                next_word = next_word.item()
                ys = m.cat([ys, m.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
                if next_word == end_symbol:
                    break
            return ys

        src = tensor_transform(pairs[0][0]).view(-1, 1)
        num_tokens = src.shape[0]
        src_mask = (m.zeros(num_tokens, num_tokens)).type(m.bool)
        with m.no_grad():
            tgt_tokens = greedy_decode(model, src, src_mask, max_len=num_tokens + 5,
                                       start_symbol=BOS, end_symbol=EOS).flatten()
        output_as_list = list(tgt_tokens.cpu().numpy())
        print(" ".join(str(int(t)) for t in output_as_list))
        return tgt_tokens, without_key_biases(params_and_grads(model))
    run_both(build, run, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ gat

@functools.cache
def gat(m):
    nn, F = m.nn, m.nn.functional

    class GraphAttentionLayer(nn.Module):
        def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.4,
                     leaky_relu_slope=0.2):
            super(GraphAttentionLayer, self).__init__()
            self.n_heads = n_heads
            self.concat = concat
            self.dropout = dropout
            if concat:
                self.out_features = out_features
                assert out_features % n_heads == 0
                self.n_hidden = out_features // n_heads
            else:
                self.n_hidden = out_features
            self.W = nn.Parameter(m.empty(size=(in_features, self.n_hidden * n_heads)))
            self.a = nn.Parameter(m.empty(size=(n_heads, 2 * self.n_hidden, 1)))
            self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
            self.softmax = nn.Softmax(dim=1)
            self.reset_parameters()

        def reset_parameters(self):
            nn.init.xavier_normal_(self.W)
            nn.init.xavier_normal_(self.a)

        def _get_attention_scores(self, h_transformed):
            source_scores = m.matmul(h_transformed, self.a[:, :self.n_hidden, :])
            target_scores = m.matmul(h_transformed, self.a[:, self.n_hidden:, :])
            e = source_scores + target_scores.mT
            return self.leakyrelu(e)

        def forward(self, h, adj_mat):
            n_nodes = h.shape[0]
            h_transformed = m.mm(h, self.W)
            h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
            h_transformed = h_transformed.view(n_nodes, self.n_heads,
                                               self.n_hidden).permute(1, 0, 2)
            e = self._get_attention_scores(h_transformed)
            connectivity_mask = -9e16 * m.ones_like(e)
            e = m.where(adj_mat > 0, e, connectivity_mask)
            attention = F.softmax(e, dim=-1)
            attention = F.dropout(attention, self.dropout, training=self.training)
            h_prime = m.matmul(attention, h_transformed)
            if self.concat:
                h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
            else:
                h_prime = h_prime.mean(dim=0)
            return h_prime

    class GAT(nn.Module):
        def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False,
                     dropout=0.4, leaky_relu_slope=0.2):
            super(GAT, self).__init__()
            self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden,
                                            n_heads=n_heads, concat=concat, dropout=dropout,
                                            leaky_relu_slope=leaky_relu_slope)
            self.gat2 = GraphAttentionLayer(in_features=n_hidden, out_features=num_classes,
                                            n_heads=1, concat=False, dropout=dropout,
                                            leaky_relu_slope=leaky_relu_slope)

        def forward(self, input_tensor, adj_mat):
            x = self.gat1(input_tensor, adj_mat)
            x = F.elu(x)
            x = self.gat2(x, adj_mat)
            return F.log_softmax(x, dim=1)
    return GAT


def _cora_like():
    """A tiny graph in the Cora files' layout: node ids, binary word features, a class name."""
    r = np.random.default_rng(16)
    V = 14
    ids = r.permutation(1000)[:V] + 100
    feats = (r.random((V, 10)) < 0.3).astype(int)
    feats[3] = 0                               # a node without words: its scale is inf
    names = np.array(["Theory", "Neural_Networks", "Rule_Learning"])[r.integers(0, 3, V)]
    content = np.concatenate([ids[:, None].astype(str), feats.astype(str), names[:, None]], 1)
    cites = np.stack([ids[r.integers(0, V, 30)], ids[r.integers(0, V, 30)]], 1).astype(np.int32)
    return content, cites


@pytest.mark.parametrize("concat", [False, True])
def test_gat(concat):
    """gat/main.py on a dense adjacency (its sparse ``to_sparse``/``sparse_coo_tensor`` steps
    are not covered here): the features from ``FloatTensor`` of a numpy int32 array scaled by
    ``1 / sum`` with the infinities zeroed by a boolean mask, ``LongTensor`` labels,
    xavier_normal_ parameters, the attention's LeakyReLU, ``.mT``, ``torch.where`` with a
    ``-9e16`` mask, heads concatenated or averaged, Adam with weight_decay, index-tensor
    splits, the printed f-string report."""
    def load(m):
        content_tensor, cites_tensor = _cora_like()
        features = m.FloatTensor(content_tensor[:, 1:-1].astype(np.int32))
        scale_vector = m.sum(features, dim=1)
        scale_vector = 1 / scale_vector
        scale_vector[scale_vector == float('inf')] = 0
        scale_vector = m.diag(scale_vector)
        features = scale_vector @ features
        classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
        labels = m.LongTensor(labels)
        idx = content_tensor[:, 0].astype(np.int32)
        idx_map = {id: pos for pos, id in enumerate(idx)}
        edges = np.array(list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]],
                                  cites_tensor)), dtype=np.int32)
        V = len(idx)
        adj_mat = m.zeros(V, V, dtype=m.int64)
        adj_mat[m.from_numpy(edges[:, 0]).long(), m.from_numpy(edges[:, 1]).long()] = 1
        adj_mat = m.eye(V) + adj_mat
        return features, labels, adj_mat

    def build(m):
        features, labels, _ = load(m)
        return gat(m)(in_features=features.shape[1], n_hidden=8, n_heads=2,
                      num_classes=labels.max().item() + 1, concat=concat, dropout=0.0,
                      leaky_relu_slope=0.2)

    def run(m, gat_net, print):
        features, labels, adj_mat = load(m)
        idx = m.randperm(len(labels))
        idx = m.from_numpy(np.random.default_rng(17).permutation(len(labels)))
        idx_test, idx_val, idx_train = idx[:4], idx[4:8], idx[8:]
        optimizer = m.optim.Adam(gat_net.parameters(), lr=0.005, weight_decay=5e-4)
        criterion = m.nn.NLLLoss()

        def test(model, criterion, input, target, mask):
            model.eval()
            with m.no_grad():
                output = model(*input)
                output, target = output[mask], target[mask]
                loss = criterion(output, target)
                acc = (output.argmax(dim=1) == target).float().sum() / len(target)
            return loss.item(), acc.item()

        for epoch in range(1, 5):
            gat_net.train()
            optimizer.zero_grad()
            output = gat_net(features, adj_mat)
            loss = criterion(output[idx_train], labels[idx_train])
            loss.backward()
            optimizer.step()
            loss_train, acc_train = test(gat_net, criterion, (features, adj_mat), labels,
                                         idx_train)
            loss_val, acc_val = test(gat_net, criterion, (features, adj_mat), labels, idx_val)
            print(f'Epoch: {epoch:04d} loss_train: {loss_train:.4f} acc_train: {acc_train:.4f} '
                  f'loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}')
        loss_test, acc_test = test(gat_net, criterion, (features, adj_mat), labels, idx_test)
        print(f'Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}')
        return features, adj_mat, params_and_grads(gat_net)
    run_both(build, run, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ imagenet's utilities

from enum import Enum  # noqa: E402


class Summary(Enum):
    NONE = 0
    AVERAGE = 1
    SUM = 2
    COUNT = 3


class AverageMeter(object):
    """imagenet/main.py's meter: it keeps whatever ``update`` is given (0-d tensors for the
    accuracies) and formats it with ``'{val:6.2f}'``."""

    def __init__(self, name, fmt=':f', summary_type=Summary.AVERAGE):
        self.name = name
        self.fmt = fmt
        self.summary_type = summary_type
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        return fmtstr.format(**self.__dict__)

    def summary(self):
        fmtstr = ''
        if self.summary_type is Summary.NONE:
            fmtstr = ''
        elif self.summary_type is Summary.AVERAGE:
            fmtstr = '{name} {avg:.3f}'
        elif self.summary_type is Summary.SUM:
            fmtstr = '{name} {sum:.3f}'
        elif self.summary_type is Summary.COUNT:
            fmtstr = '{name} {count:.3f}'
        return fmtstr.format(**self.__dict__)


class ProgressMeter(object):
    def __init__(self, num_batches, meters, print, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix
        self.print = print

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        self.print('\t'.join(entries))

    def display_summary(self):
        entries = [" *"]
        entries += [meter.summary() for meter in self.meters]
        self.print(' '.join(entries))

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = '{:' + str(num_digits) + 'd}'
        return '[' + fmt + '/' + fmt.format(num_batches) + ']'


def accuracy(m, output, target, topk=(1,)):
    with m.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def test_imagenet_training_utilities():
    """imagenet/main.py without its data and distributed parts: SGD with momentum and
    weight_decay, StepLR, ``accuracy`` by ``topk``/``t``/``eq``/``expand_as`` and an in-place
    ``mul_``, AverageMeters holding 0-d tensors printed with ``'{val:6.2f}'``, the best
    accuracy kept by ``acc1 > best_acc1`` and ``max``, the checkpoint dict (model, optimizer,
    scheduler state, a tensor ``best_acc1``) saved, loaded with the default ``weights_only``
    and resumed."""
    def build(m):
        return m.nn.Sequential(m.nn.Flatten(), m.nn.Linear(12, 16), m.nn.ReLU(),
                               m.nn.Linear(16, 7))

    def run(m, model, print):
        r = np.random.default_rng(18)
        x = r.standard_normal((10, 3, 2, 2)).astype(np.float32)
        y = r.integers(0, 7, 10)
        D = m.utils.data
        loader = D.DataLoader(D.TensorDataset(m.tensor(x), m.tensor(y)), batch_size=4,
                              shuffle=False, num_workers=0, pin_memory=False)
        device = m.device("cpu")
        criterion = m.nn.CrossEntropyLoss().to(device)

        def make_opt(model):
            optimizer = m.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
            return optimizer, m.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)

        def train(model, optimizer, epoch):
            losses = AverageMeter('Loss', ':.4e', Summary.NONE)
            top1 = AverageMeter('Acc@1', ':6.2f', Summary.NONE)
            top5 = AverageMeter('Acc@5', ':6.2f', Summary.NONE)
            progress = ProgressMeter(len(loader), [losses, top1, top5], print,
                                     prefix="Epoch: [{}]".format(epoch))
            model.train()
            for i, (images, target) in enumerate(loader):
                images = images.to(device, non_blocking=True)
                target = target.to(device, non_blocking=True)
                output = model(images)
                loss = criterion(output, target)
                acc1, acc5 = accuracy(m, output, target, topk=(1, 5))
                losses.update(loss.item(), images.size(0))
                top1.update(acc1[0], images.size(0))
                top5.update(acc5[0], images.size(0))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                progress.display(i + 1)
            return top1

        def validate(model):
            losses = AverageMeter('Loss', ':.4e', Summary.NONE)
            top1 = AverageMeter('Acc@1', ':6.2f', Summary.AVERAGE)
            top5 = AverageMeter('Acc@5', ':6.2f', Summary.AVERAGE)
            progress = ProgressMeter(len(loader), [losses, top1, top5], print, prefix='Test: ')
            model.eval()
            with m.no_grad():
                for i, (images, target) in enumerate(loader):
                    output = model(images)
                    loss = criterion(output, target)
                    acc1, acc5 = accuracy(m, output, target, topk=(1, 5))
                    losses.update(loss.item(), images.size(0))
                    top1.update(acc1[0], images.size(0))
                    top5.update(acc5[0], images.size(0))
                    if i % 2 == 0:
                        progress.display(i + 1)
            progress.display_summary()
            return top1.avg

        optimizer, scheduler = make_opt(model)
        best_acc1 = 0
        saved = []
        for epoch in range(0, 2):
            meter = train(model, optimizer, epoch)
            acc1 = validate(model)
            scheduler.step()
            is_best = acc1 > best_acc1
            best_acc1 = max(acc1, best_acc1)
            f = io.BytesIO()
            m.save({'epoch': epoch + 1, 'arch': 'mlp', 'state_dict': model.state_dict(),
                    'best_acc1': best_acc1, 'optimizer': optimizer.state_dict(),
                    'scheduler': scheduler.state_dict()}, f)
            saved.append((f.getvalue(), bool(is_best)))
        # resume from the first checkpoint
        checkpoint = m.load(io.BytesIO(saved[0][0]))
        model2 = build(m)
        optimizer2, scheduler2 = make_opt(model2)
        start_epoch = checkpoint['epoch']
        best2 = checkpoint['best_acc1']
        model2.load_state_dict(checkpoint['state_dict'])
        optimizer2.load_state_dict(checkpoint['optimizer'])
        scheduler2.load_state_dict(checkpoint['scheduler'])
        print("=> loaded checkpoint '{}' (epoch {})".format('checkpoint.pth.tar',
                                                           checkpoint['epoch']))
        train(model2, optimizer2, start_epoch)
        return (best_acc1, [b for _, b in saved], meter.sum, meter.avg, best2,
                scheduler2.get_last_lr(), params_and_grads(model), params_and_grads(model2))
    run_both(build, run, atol=1e-5, rtol=1e-4)


def test_dcgan_data_parallel_branch():
    """dcgan's models call ``nn.parallel.data_parallel(self.main, input, range(ngpu))`` when
    the input is on an accelerator and ``ngpu > 1``: the function (not its submodule) is
    there, and without an accelerator it raises torch's error; ``DataParallel`` on the CPU
    wraps the module (``module.`` keys) and runs it. (Once failed: ``nn.parallel.data_parallel``
    was the submodule, a TypeError when called.)"""
    from oracle import same_as_torch

    def fn(m):
        net = m.nn.Sequential(m.nn.Linear(3, 2))
        return m.nn.parallel.data_parallel(net, m.ones(2, 3), range(2))
    same_as_torch(fn)
    same_as_torch(lambda m: m.nn.parallel.data_parallel(m.nn.Linear(3, 2), m.ones(2, 3)))

    def wrapped(m):
        net = m.nn.DataParallel(m.nn.Linear(3, 2))
        from importlib import import_module
        cls = import_module(f"{m.__name__}.nn.parallel.data_parallel").DataParallel
        return (sorted(net.state_dict()), net.device_ids, isinstance(net, cls),
                callable(m.nn.parallel.data_parallel), tuple(net(m.ones(4, 3)).shape))
    same_as_torch(wrapped)


# ------------------------------------------------------------------ losses met by the sweep

_LOSS_SHAPES = [((2, 1), (2,)), ((2,), (2, 1)), ((2, 2), (2,)), ((2,), (2, 2)), ((1,), (3,)),
                ((3,), (1,)), ((), (2,)), ((2,), ()), ((2,), (3,)), ((3, 2), (3, 2))]


def _loss_inputs(m, a, b, dtypes=("float32", "float32")):
    x = m.linspace(-1, 1, int(np.prod(a, dtype=int))).reshape(a).to(getattr(m, dtypes[0]))
    y = m.linspace(1, -0.5, int(np.prod(b, dtype=int))).reshape(b).sign().to(getattr(m, dtypes[1]))
    return x, y


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("a,b", _LOSS_SHAPES, ids=str)
def test_soft_margin_losses_shapes(a, b, reduction):
    """The ``F.smooth_l1_loss(value, torch.tensor([R]))`` family of reinforcement_learning,
    swept over input/target shapes: ``soft_margin_loss`` (torch computes it in place in
    ``input``'s shape: a target that widens it raises "output with shape ... doesn't match
    the broadcast shape ...") and ``multilabel_soft_margin_loss`` (its class dim is the
    input's last, counted from the front of the broadcast loss; a 0-d input's IndexError).
    Both once differed: torchlike broadcast soft_margin's result and summed the loss's last
    dim."""
    from oracle import same_as_torch

    def fn(m, name):
        x, y = _loss_inputs(m, a, b)
        x.requires_grad_(True)
        f = getattr(m.nn.functional, name)
        out = f(x, y.abs() if name.startswith("multilabel") else y, reduction=reduction)
        out.sum().backward()
        return out, x.grad
    same_as_torch(lambda m: fn(m, "soft_margin_loss"), atol=1e-6, rtol=1e-6)
    same_as_torch(lambda m: fn(m, "multilabel_soft_margin_loss"), atol=1e-6, rtol=1e-6)
    same_as_torch(lambda m: m.nn.SoftMarginLoss(reduction=reduction)(*_loss_inputs(m, a, b)),
                  atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"),
                                    ("float16", "float32"), ("bfloat16", "float32"),
                                    ("float32", "int64"), ("int64", "float32"),
                                    ("int64", "int64"), ("bool", "float32"), ("float32", "bool"),
                                    ("int32", "float64")], ids=str)
def test_soft_margin_loss_result_dtype(dtypes):
    """soft_margin_loss's result has the input's dtype (torch's in-place ``mul_(target)``
    rounds a wider target's product into it; once torchlike promoted to the common dtype),
    and an integer or bool input is refused with torch's message."""
    from oracle import same_as_torch
    same_as_torch(lambda m: [m.nn.functional.soft_margin_loss(
        *_loss_inputs(m, (3,), (3,), dtypes), reduction=r) for r in ("mean", "none")],
        atol=1e-3, rtol=1e-3)


def test_removed_reinforce_of_the_old_reinforcement_learning_example():
    """The pre-0.4 reinforcement_learning example called ``action.reinforce(reward)``: torch
    keeps a stub that raises RuntimeError pointing at torch.distributions, and so does
    torchlike."""
    from oracle import same_as_torch
    same_as_torch(lambda m: m.ones(2).reinforce(1.0), msg="exact")
