"""Ctrl-C (SIGINT) of an offsim command: exit code 130 within a second, with one line saying what was kept.

The main thread handles SIGINT as Python does: ``KeyboardInterrupt`` unwinds the command,
whose ``finally`` blocks remove half-written files, and the CLI prints
``offsim: interrupted; <what was kept>`` (``report``) and ends the process without the
interpreter's teardown, which after a large run takes seconds on a busy machine and has
nothing left to save. Python runs a signal handler only
between bytecodes, so a long call into compiled code (an LLVM pass while numba compiles
a kernel, a large numpy sort while a trace is built) delays it by seconds. A watchdog
thread, woken by the signal itself through ``signal.set_wakeup_fd``, therefore gives the
main thread ``GRACE_S`` and then prints the same line and ends the process. The calls
that last that long release the GIL, so the watchdog runs during them. What a killed
command leaves (hidden temporary folders, a point half written) the next run on the same
output directory removes.

Each command says what an interruption keeps with ``keep(describe)``: ``describe()`` is
called when the line is printed, so it reports the state at that moment (for a study,
the points stored so far).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C
GRACE_S = 0.5  # how long the main thread has to unwind before the watchdog ends the process, s

_describe: Callable[[], str] = lambda: "nothing written"
_reported = threading.Lock()  # held once the line is printed: one line, whichever thread prints it
_watchdog: threading.Thread | None = None


def keep(describe: Callable[[], str]) -> None:
    """Set what an interruption from now on keeps: ``describe()`` returns it as a phrase, e.g.
    ``"kept 3 of 15 points in results/studies/x"``."""
    global _describe
    _describe = describe


def kept_in(out: Path) -> str:
    """What an interrupted command that writes directory ``out`` kept: its files as they are now."""
    out = Path(os.path.normpath(out))  # as the command took it (simulator.config.outputs.lexical)
    if not out.is_dir():
        return f"nothing kept ({out} not created)"
    n = sum(len(files) for _, _, files in os.walk(out))
    return f"kept {out} as it is now ({n} file{'' if n == 1 else 's'}); the same command writes it again"


def report(program: str) -> int:
    """Print ``<program>: interrupted; <what was kept>`` on stderr (once per process) and return 130."""
    if _reported.acquire(blocking=False):
        try:
            kept = _describe()
        except Exception as exc:  # noqa: BLE001 -- the line is printed whatever describing the state costs
            kept = f"what was kept is unknown ({type(exc).__name__}: {exc})"
        print(f"{program}: interrupted; {kept}", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def _on_sigint(signum: int, frame: object) -> None:
    """The first Ctrl-C interrupts the command; later ones are ignored while it unwinds (the
    watchdog ends the process within GRACE_S), so that cleanup is not cut short by a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised because of a KeyboardInterrupt somewhere down its chain of causes:
    numba's dispatcher, for one, turns a KeyboardInterrupt raised while it runs (the SIGINT handler
    fires between its bytecodes) into a ``SystemError`` caused by it."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def interrupted(program: str) -> int:
    """What the CLI does on KeyboardInterrupt: ``report`` and return 130; in a process set up by ``install``,
    end it there instead (interpreter teardown of a large run takes seconds: nothing is left to save)."""
    code = report(program)
    if _watchdog is not None:
        _end_process()
    return code


def _end_process() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a reader gone
            pass
    os._exit(EXIT_INTERRUPTED)


def _watch(read_fd: int, program: str) -> None:
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if signal.SIGINT in data:
            time.sleep(GRACE_S)
            report(program)
            _end_process()


def _quiet_interrupt(unraisable: object) -> None:
    """``sys.unraisablehook`` of an installed process: a KeyboardInterrupt raised while a finalizer
    (``__del__``) ran cannot unwind the command, and the watchdog ends the process within GRACE_S with
    the one line, so it is not printed as an ignored exception; anything else is, as Python prints it."""
    if not isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def install(program: str) -> None:
    """Handle Ctrl-C as the module docstring says, for a process that runs one command from its main
    thread; once per process (later calls do nothing)."""
    global _watchdog
    if _watchdog is not None or threading.current_thread() is not threading.main_thread():
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C-level handler must never block on a full pipe
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_interrupt
    _watchdog = threading.Thread(target=_watch, args=(read_fd, program), name="offsim-interrupt-watch", daemon=True)
    _watchdog.start()
