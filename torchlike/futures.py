"""torch.futures: ``Future``, ``collect_all``, ``wait_all``.

torchlike's asynchronous work (a collective's ``Work.get_future()``, DDP communication hooks)
finishes before its future is handed out, so a future is usually already complete; one made
with ``Future()`` completes when ``set_result`` / ``set_exception`` is called, and runs its
callbacks (``then``, ``add_done_callback``) then, in the order they were added.
"""
from __future__ import annotations

import types as _types

__all__ = ["Future", "collect_all", "wait_all"]

_UNSET = object()
_TWICE = ("Attempting to mark a completed Future as complete again. Note that a Future can only "
          "be marked completed once.")


class Future:
    """torch.futures.Future: a value (or an error) that callbacks can chain on;
    ``Future[T]`` annotates (captum's signatures)."""

    __class_getitem__ = classmethod(_types.GenericAlias)

    def __init__(self, *, devices=None):
        self._value = _UNSET
        self._error = None
        self._callbacks = []

    def done(self):
        return self._value is not _UNSET or self._error is not None

    def wait(self):
        if not self.done():
            raise RuntimeError("Future.wait: the future is not completed, and nothing in "
                               "this process will complete it (torchlike runs work to "
                               "completion before handing out its future)")
        return self.value()

    def value(self):
        if self._error is not None:
            raise self._error
        if self._value is _UNSET:
            raise RuntimeError("Future.value: the future is not completed")
        return self._value

    def set_result(self, result):
        if self.done():
            raise RuntimeError(_TWICE)
        self._value = result
        self._run_callbacks()

    def set_exception(self, result):
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        if self.done():
            raise RuntimeError(_TWICE)
        self._error = result
        self._run_callbacks()

    def then(self, callback):
        """A future of ``callback(self)``'s result, completed when this one is."""
        child = Future()

        def run(fut):
            try:
                child.set_result(callback(fut))
            except Exception as e:      # the error reaches the child, wrapped as in torch
                err = RuntimeError(f"Got the following error when running the callback: "
                                   f"{type(e).__name__}: {e}")
                err.__cause__ = e
                child.set_exception(err)
        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback):
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _run_callbacks(self):
        cbs, self._callbacks = self._callbacks, []
        for cb in cbs:
            cb(self)

    @classmethod
    def _completed(cls, value):
        f = cls()
        f._value = value
        return f

    def __repr__(self):
        return f"<torch.futures.Future object at {hex(id(self))}>"


def collect_all(futures):
    """A future of the list of ``futures``, completed when all of them are."""
    out = Future()
    pending = [len(futures)]
    if not futures:
        out.set_result([])
        return out

    def one(_):
        pending[0] -= 1
        if pending[0] == 0:
            out.set_result(list(futures))
    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """The values of ``futures`` (each waited for)."""
    return [f.wait() for f in futures]
