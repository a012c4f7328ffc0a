"""Timing helpers: each measurement in a fresh interpreter, with a hard time limit."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable


def _child(target: Callable, args: tuple, queue) -> None:
    start = time.perf_counter()
    result = target(*args)
    queue.put((time.perf_counter() - start, result))


def timed_in_fresh_process(target: Callable, args: tuple, limit: float):
    """Return ``(seconds, result)`` of ``target(*args)`` run in a new interpreter, or ``None`` past ``limit``.

    A fresh process means no warm caches from earlier measurements; the import cost is excluded.
    """
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_child, args=(target, args, queue))
    process.start()
    process.join(limit)
    if process.is_alive():
        process.terminate()
        process.join()
        return None
    if process.exitcode != 0:
        raise RuntimeError(f"benchmark child {target.__name__}{args} failed with exit code {process.exitcode}")
    return queue.get()
