"""torch.autograd.detect_anomaly / set_detect_anomaly against torch 2.13."""
from __future__ import annotations

import warnings

import pytest
import torch

import torchlike as tl


def _nan_backward(m):
    x = m.tensor([0.0, 1.0], requires_grad=True)
    return x, (x.sqrt() * 0).sum()


def test_nan_gradient_raises_naming_the_node():
    msgs = []
    for m in (torch, tl):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                assert m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
                _, y = _nan_backward(m)
                with pytest.raises(RuntimeError) as info:
                    y.backward()
        msgs.append((str(info.value), [str(x.message).split("\n")[0] for x in w]))
        assert not m.is_anomaly_enabled()
    assert msgs[0][0] == msgs[1][0] == ("Function 'SqrtBackward0' returned nan values in its "
                                        "0th output.")
    assert msgs[0][1][0] == msgs[1][1][0]       # "Anomaly Detection has been enabled. ..."
    assert msgs[0][1][1] == msgs[1][1][1]       # "Error detected in SqrtBackward0. ..."


def test_check_nan_false_and_off():
    res = []
    for m in (torch, tl):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly(check_nan=False):
                assert not m.is_anomaly_check_nan_enabled()
                x, y = _nan_backward(m)
                y.backward()
        res.append(str(x.grad))
        x, y = _nan_backward(m)
        y.backward()
    assert res[0] == res[1] == "tensor([nan, 0.])"


def test_set_detect_anomaly_function_and_context():
    for m in (torch, tl):
        m.autograd.set_detect_anomaly(True)
        try:
            assert m.is_anomaly_enabled()
            _, y = _nan_backward(m)
            with pytest.raises(RuntimeError, match="returned nan values"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    y.backward()
        finally:
            m.autograd.set_detect_anomaly(False)
        assert not m.is_anomaly_enabled()
        with m.autograd.set_detect_anomaly(True, check_nan=False):
            assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(True)
        assert m.is_anomaly_enabled()
        m.set_anomaly_enabled(False)


def test_not_a_decorator():
    for m in (torch, tl):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="'detect_anomaly' object is not callable"):
                m.autograd.detect_anomaly()(lambda: None)


def test_finite_backward_unchanged():
    res = []
    for m in (torch, tl):
        x = m.tensor([0.5, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                (x.sqrt() * x).sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == pytest.approx(res[1])


def _exp_then_written(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.mul_(2)
    return y


def _backward_warnings(m, forward, anomaly_forward=True):
    """The error and warnings of a backward in anomaly mode whose node's saved output was
    written in place."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if anomaly_forward:
            with m.autograd.detect_anomaly():
                y = forward(m)
                with pytest.raises(RuntimeError) as info:
                    y.sum().backward()
        else:
            y = forward(m)
            with m.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as info:
                    y.sum().backward()
    return str(info.value), [str(x.message) for x in w], y


def test_an_error_in_a_backward_prints_the_forward_traceback():
    """Any error in a node's backward (here the saved-version check) is preceded by torch's
    "Error detected in ..." warning carrying the forward call's traceback, and the version
    error's hint is anomaly mode's."""
    got = {m: _backward_warnings(m, _exp_then_written) for m in (torch, tl)}
    (msg_t, warn_t, y_t), (msg_l, warn_l, y_l) = got[torch], got[tl]
    assert msg_l == msg_t and msg_t.endswith("Good luck!")
    assert warn_l == warn_t
    assert warn_t[1].startswith("Error detected in ExpBackward0. Traceback of forward call")
    assert "y = x.exp()" in warn_t[1]
    # the node keeps it: ``metadata["traceback_"]``, torch's list of formatted frames
    assert y_l.grad_fn.next_functions[0][0].metadata["traceback_"] == \
        y_t.grad_fn.next_functions[0][0].metadata["traceback_"]


def test_a_node_made_outside_anomaly_mode_has_no_forward_traceback():
    got = {m: _backward_warnings(m, _exp_then_written, anomaly_forward=False)
           for m in (torch, tl)}
    assert got[tl][:2] == got[torch][:2]
    assert got[torch][1][1].startswith("Error detected in ExpBackward0. No forward pass "
                                       "information available.")
    for m in (torch, tl):
        x = m.tensor([1.0], requires_grad=True)
        assert x.exp().grad_fn.metadata == {}


def test_the_version_hint_outside_anomaly_mode():
    msgs = []
    for m in (torch, tl):
        y = _exp_then_written(m)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and "enable anomaly detection" in msgs[0]
