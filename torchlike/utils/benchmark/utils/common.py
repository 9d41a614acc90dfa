"""Measurement: the times of one benchmark, with torch's statistics and repr."""
from __future__ import annotations

import textwrap

import numpy as np

__all__ = ["Measurement", "select_unit", "TaskSpec"]


def select_unit(t):
    """(unit name, scale) as torch picks them: ns, us, ms or s."""
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.log10(np.array(t)) // 3), "s")
    time_scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]
    return time_unit, time_scale


class TaskSpec:
    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None,
                 description=None, env=None, num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + \
            textwrap.indent(self.stmt, "  ")


class Measurement:
    """``number_per_run`` calls per measured block, ``raw_times`` seconds per block."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):
        if name in ("stmt", "setup", "label", "sub_label", "description", "num_threads",
                    "env", "title"):
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return float(np.median(self.times))

    @property
    def mean(self):
        return float(np.mean(self.times))

    @property
    def iqr(self):
        return float(np.percentile(self.times, 75) - np.percentile(self.times, 25))

    @property
    def significant_figures(self):
        n = len(self.times)
        if n < 2:
            return 1
        rel = self.iqr / self.median if self.median else 0
        return max(1, min(4, int(-np.log10(max(rel, 1e-4))) + 1)) if rel else 4

    @property
    def has_warnings(self):
        return len(self.times) >= 4 and self.iqr / self.median > 0.1

    def __repr__(self):
        unit, scale = select_unit(self.median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {hex(id(self))}>",
                 self.task_spec.title]
        if self.task_spec.description:
            lines.append(f"  {self.task_spec.description}")
        if len(self.times) >= 4:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({np.percentile(self.times, 25) / scale:.2f} to "
                         f"{np.percentile(self.times, 75) / scale:.2f})")
        else:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        lines.append(f"  {self.number_per_run * len(self.raw_times)} measurement"
                     f"{'s' if len(self.raw_times) > 1 else ''}, {self.number_per_run} runs "
                     f"per measurement, {self.task_spec.num_threads} thread"
                     f"{'s' if self.task_spec.num_threads > 1 else ''}")
        return "\n".join(lines)

    @staticmethod
    def merge(measurements):
        out = []
        by_title = {}
        for m in measurements:
            by_title.setdefault(m.task_spec.title, []).append(m)
        for ms in by_title.values():
            raw = [t * ms[0].number_per_run for m in ms for t in m.times]
            out.append(Measurement(ms[0].number_per_run, raw, ms[0].task_spec))
        return out


