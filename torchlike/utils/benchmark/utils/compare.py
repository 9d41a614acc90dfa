"""Compare: a table of Measurements grouped by label and description."""
from __future__ import annotations

from .common import select_unit

__all__ = ["Compare"]


class Compare:
    def __init__(self, results):
        self._results = list(results)
        self._trim = False
        self._colorize = False

    def extend_results(self, results):
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True

    def __str__(self):
        if not self._results:
            return ""
        unit, scale = select_unit(min(r.median for r in self._results))
        lines = []
        for r in self._results:
            name = r.task_spec.sub_label or r.task_spec.stmt
            desc = f" [{r.task_spec.description}]" if r.task_spec.description else ""
            lines.append(f"  {name}{desc}: {r.median / scale:.1f} {unit}")
        label = self._results[0].task_spec.label or ""
        return f"[{'-' * 10} {label} {'-' * 10}]\n" + "\n".join(lines) + \
            f"\n\nTimes are in {unit}."

    def print(self):
        print(str(self))
