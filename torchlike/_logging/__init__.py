"""torch._logging: ``set_logs`` accepts torch's keywords; torchlike.compile has no
dynamo/inductor logs to turn on, so it records the settings only."""
from __future__ import annotations

__all__ = ["set_logs"]

_settings: dict = {}


def set_logs(**kwargs):
    """torch._logging.set_logs(dynamo=logging.INFO, graph_breaks=True, ...): recorded."""
    _settings.clear()
    _settings.update(kwargs)
