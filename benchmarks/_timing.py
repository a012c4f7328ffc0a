"""Timing helpers: each measurement in a fresh interpreter, with a hard time limit."""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_module
import time
from collections.abc import Callable


def _child(target: Callable, args: tuple, results) -> None:
    start = time.perf_counter()
    value = target(*args)
    results.put((time.perf_counter() - start, value))


def timed_in_fresh_process(target: Callable, args: tuple, limit: float):
    """Return ``(seconds, result)`` of ``target(*args)`` run in a new interpreter, or ``None`` past ``limit``.

    A fresh process means no warm caches from earlier measurements; the import cost is excluded.  The
    result is read before the child is joined (a child blocks on exit until its queue is drained).
    """
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    process = ctx.Process(target=_child, args=(target, args, results))
    process.start()
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                outcome = results.get(timeout=0.5)
                break
            except queue_module.Empty:
                if not process.is_alive():
                    raise RuntimeError(
                        f"benchmark child {target.__name__}{args} failed with exit code {process.exitcode}"
                    ) from None
                if time.monotonic() > deadline:
                    return None
    finally:
        if process.is_alive() and time.monotonic() > deadline:
            process.terminate()
        process.join()
    return outcome
