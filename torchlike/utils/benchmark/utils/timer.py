"""Timer: torch.utils.benchmark.Timer on ``time.perf_counter``."""
from __future__ import annotations

import enum
import textwrap
import time

from .common import Measurement, TaskSpec

__all__ = ["Timer", "Measurement", "Language"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _sync():
    """Wait for queued XLA work (torch's Timer synchronizes CUDA the same way)."""
    import jax
    for a in jax.live_arrays():
        try:
            a.block_until_ready()
        except Exception:
            pass


class Timer:
    """``Timer(stmt, setup, globals=...)``; ``timeit(n)``, ``blocked_autorange()``,
    ``adaptive_autorange()`` return a ``Measurement``."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("Timer(language='c++'): torchlike times Python "
                                      "statements only")
        stmt = textwrap.dedent(stmt).strip() if isinstance(stmt, str) else stmt
        setup = textwrap.dedent(setup).strip() if isinstance(setup, str) else setup
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description,
                                   env, num_threads)
        self._timer = timer
        self._globals = dict(globals or {})
        self._stmt = compile(stmt, "<timeit-stmt>", "exec")
        exec(compile(setup, "<timeit-setup>", "exec"), self._globals)

    def _time(self, number):
        g = self._globals
        code = self._stmt
        _sync()
        t0 = self._timer()
        for _ in range(number):
            exec(code, g)
        _sync()
        return self._timer() - t0

    def timeit(self, number=1000000):
        self._time(1)           # warm-up (compiles)
        return Measurement(number, [self._time(number)], self._task_spec)

    def _threshold(self, min_run_time):
        number = 1
        while True:
            t = self._time(number)
            if t >= min_run_time / 1000 or number >= 10 ** 9:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        number = self._threshold(min_run_time)
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._time(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        number = self._threshold(min_run_time)
        times, total = [], 0.0
        while True:
            t = self._time(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            m = Measurement(number, times, self._task_spec)
            if total >= min_run_time and len(times) > 3 and m.iqr / m.median < threshold:
                return m
            if total >= max_run_time:
                return m

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("Timer.repeat is not implemented in torch either; use "
                                  "blocked_autorange")

    def autorange(self, callback=None):
        raise NotImplementedError("Timer.autorange: use blocked_autorange")
