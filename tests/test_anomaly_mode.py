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
