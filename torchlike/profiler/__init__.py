"""torchlike.profiler: torch.profiler's context managers recording wall time per region.

``profile`` records every ``record_function`` region (and, with a ``schedule``, one
``ProfilerStep#N`` region per active step) with its host wall time; ``key_averages()`` groups
them by name into torch's table. XLA kernels are not listed op by op as torch lists ``aten::``
ops; for a device-level trace pass ``jax_trace_dir=...`` (a torchlike extension), which runs
``jax.profiler`` over the same window (viewable in TensorBoard/Perfetto), or use
``tensorboard_trace_handler``. ``record_function`` also opens a ``jax.profiler``
``TraceAnnotation`` so regions appear in jax's trace.
"""
from __future__ import annotations

import enum
import functools
import json
import os
import threading
import time
import warnings

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList", "FunctionEvent",
           "FunctionEventAvg", "itt", "_KinetoProfile", "kineto_available"]


def kineto_available():
    """torch's question whether its Kineto tracer was built in: torchlike's profiler is its
    own (times measured in Python), so False."""
    return False


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    from .. import _device
    acts = {ProfilerActivity.CPU}
    if _device.cuda_devices():
        acts.add(ProfilerActivity.CUDA)
    return acts


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch's step schedule: skip ``skip_first``, then cycles of wait/warmup/active steps."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if mod_step < num_steps - 1
                else ProfilerAction.RECORD_AND_SAVE)

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


# ------------------------------------------------------------------ events

class FunctionEvent:
    """One recorded region: name, start and end (microseconds), its children."""

    def __init__(self, id, name, thread, start_us, end_us, parent=None):
        self.id = id
        self.name = self.key = name
        self.thread = thread
        self.time_range_start, self.time_range_end = start_us, end_us
        self.cpu_parent = parent
        self.cpu_children = []
        self.count = 1
        self.device_type = "CPU"
        self.is_user_annotation = True
        self.input_shapes = []

    @property
    def cpu_time_total(self):
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    device_time_total = cuda_time_total = property(lambda self: 0.0)
    self_device_time_total = self_cuda_time_total = property(lambda self: 0.0)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_fmt_us(self.cpu_time_total)}>")


class FunctionEventAvg:
    """Events of one name summed (``key_averages``)."""

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = self.cuda_time_total = 0.0
        self.self_device_time_total = self.self_cuda_time_total = 0.0
        self.input_shapes = None

    def add(self, ev):
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt_us(self.self_cpu_time_total)} "
                f"cpu_time={_fmt_us(self.cpu_time_total)}>")


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events with torch's ``table``, ``key_averages`` and ``export_chrome_trace``."""

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for ev in self:
            groups.setdefault(ev.key, FunctionEventAvg(ev.key)).add(ev)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        rows = list(self)
        if sort_by is not None and sort_by != "none":
            key = sort_by.replace("cuda", "device")
            rows.sort(key=lambda e: getattr(e, key, getattr(e, sort_by, 0)), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total or 1.0
        name_w = max([len("Name")] + [len(e.key) for e in rows]) + 4
        name_w = min(name_w, max_name_column_width)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "# of Calls"]
        sep = "-" * name_w + "  " + "  ".join("-" * 12 for _ in cols) + "  "
        lines = [sep, "Name".rjust(name_w) + "  " + "  ".join(c.rjust(12) for c in cols) + "  ",
                 sep]
        for e in rows:
            cells = [f"{100 * e.self_cpu_time_total / total:.2f}%",
                     _fmt_us(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%", _fmt_us(e.cpu_time_total),
                     _fmt_us(e.cpu_time_total / max(e.count, 1)), str(e.count)]
            lines.append(e.key[:name_w].rjust(name_w) + "  " +
                         "  ".join(c.rjust(12) for c in cells) + "  ")
        lines.append(sep)
        lines.append(f"Self CPU time total: {_fmt_us(self.self_cpu_time_total)}")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        events = [{"name": e.name, "ph": "X", "ts": e.time_range_start,
                   "dur": e.cpu_time_total, "pid": os.getpid(), "tid": e.thread,
                   "cat": "user_annotation"} for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


# ------------------------------------------------------------------ recording

class _Active(threading.local):
    def __init__(self):
        self.stack = []


_active_profilers = []          # profilers currently recording (any thread)
_lock = threading.Lock()
_local = _Active()
_ids = iter(range(1, 1 << 62))


def _now_us():
    return time.perf_counter_ns() / 1000.0


class record_function:
    """Context manager / decorator naming a region: recorded by active profilers and shown in
    jax's trace as a ``TraceAnnotation``."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ann = None

    def __enter__(self):
        import jax
        self._ann = jax.profiler.TraceAnnotation(self.name)
        self._ann.__enter__()
        self._start = _now_us()
        self._parent = _local.stack[-1] if _local.stack else None
        _local.stack.append(self)
        self._event = None
        return self

    def __exit__(self, *exc):
        end = _now_us()
        if _local.stack and _local.stack[-1] is self:
            _local.stack.pop()
        with _lock:
            recorders = [p for p in _active_profilers if p._recording]
        for p in recorders:
            p._record(self, self._start, end)
        self._ann.__exit__(*exc)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


class _KinetoProfile:
    """Base of ``profile``: start/stop recording, events, key_averages, traces."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None, jax_trace_dir=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.jax_trace_dir = jax_trace_dir
        self.acc_events = acc_events
        self._events = EventList()
        self._recording = False
        self._jax_tracing = False

    def _record(self, rf, start, end):
        ev = FunctionEvent(next(_ids), rf.name, threading.get_ident(), start, end)
        # children finish first: adopt events recorded inside this region
        for e in self._events:
            if e.cpu_parent is None and e.time_range_start >= start and \
                    e.time_range_end <= end and e.thread == ev.thread and e is not ev:
                e.cpu_parent = ev
                ev.cpu_children.append(e)
        self._events.append(ev)

    def start_trace(self):
        if self.jax_trace_dir is not None and not self._jax_tracing:
            import jax
            jax.profiler.start_trace(self.jax_trace_dir)
            self._jax_tracing = True
        self._recording = True
        with _lock:
            if self not in _active_profilers:
                _active_profilers.append(self)

    def stop_trace(self):
        self._recording = False
        with _lock:
            if self in _active_profilers:
                _active_profilers.remove(self)
        if self._jax_tracing:
            import jax
            jax.profiler.stop_trace()
            self._jax_tracing = False

    def prepare_trace(self):
        pass

    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise NotImplementedError("export_stacks: torchlike records no Python stacks; use "
                                  "jax_trace_dir= for a device trace")

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("export_memory_timeline: use jax.profiler's memory profile "
                                  "(jax.profiler.save_device_memory_profile)")


class profile(_KinetoProfile):
    """``with torchlike.profiler.profile(...) as prof: ...; prof.step()``: torch's profiler
    state machine (schedule, on_trace_ready, step) over wall-time regions."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 jax_trace_dir=None):
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         jax_trace_dir=jax_trace_dir, acc_events=acc_events)
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_rf = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(None, self.current_action)
        if self.record_steps:
            self._open_step()

    def stop(self):
        if self.record_steps:
            self._close_step()
        self._transit(self.current_action, None)

    def _open_step(self):
        self._step_rf = record_function("ProfilerStep#" + str(self.step_num))
        self._step_rf.__enter__()

    def _close_step(self):
        if self._step_rf is not None:
            self._step_rf.__exit__(None, None, None)
            self._step_rf = None

    def step(self):
        """Signal the end of a step: advances the schedule."""
        if self.record_steps:
            self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        if self.record_steps:
            self._open_step()

    def _transit(self, prev, cur):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and cur is None):
            self.stop_trace()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if cur in recording and not self._recording:
            if (prev not in recording or prev == ProfilerAction.RECORD_AND_SAVE) \
                    and not self.acc_events:
                self._events = EventList()
            self.start_trace()
        elif cur not in recording and self._recording:
            self.stop_trace()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        evs = EventList()
        for e in self._events:
            if e.name.startswith("ProfilerStep#"):
                e.key = "ProfilerStep*"
            evs.append(e)
        return evs.key_averages()


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready handler writing a chrome trace (``*.pt.trace.json``) into ``dir_name``."""
    import socket

    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        fname = f"{name}.{time.time_ns() // 1000000}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, fname))
    return handler_fn


class _Itt:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def range_push(msg):
        pass

    @staticmethod
    def range_pop():
        pass

    @staticmethod
    def mark(msg):
        pass


itt = _Itt()
