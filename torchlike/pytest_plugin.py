"""Run a PyTorch test suite on torchlike: ``python -m pytest -p torchlike.pytest_plugin tests/``.

pytest imports a ``-p`` plugin before it collects conftest files and test modules, so every
``import torch`` there gives torchlike (see ``torchlike/_dropin.py``); xdist workers inherit it.
The same without the option: ``python -m torchlike -m pytest tests/``, or
``pytest_plugins = ["torchlike.pytest_plugin"]`` in the suite's top ``conftest.py``.
"""
from torchlike._dropin import install

install()


def pytest_report_header(config):
    import torchlike
    return f"torchlike {torchlike.__version__}: `import torch` gives torchlike"
