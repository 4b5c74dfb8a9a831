"""A synchronous client for UCI chess engines (Stockfish and any other UCI engine).

The engine runs as a subprocess; a reader thread collects its output, so every call is a plain
blocking function call with a timeout.  No asyncio is used, which makes the client work the same
in scripts, in worker processes and inside Jupyter (whose event loop is already running).

    >>> from mavgame.engines.uci import UCIEngine
    >>> with UCIEngine("stockfish", options={"Skill Level": 5}) as sf:
    ...     best = sf.play("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", movetime=100)
    ...     lines = sf.analyse(moves=["e2e4"], multipv=3, nodes=20000)
    ...     total, per_move = sf.perft(3)

What the engine says (scores, ``info`` lines, the result of a ``go``, its options) and the errors are
:mod:`mavgame.engines.uci_protocol`; errors are subclasses of its ``EngineError``:

- ``EngineTerminatedError``: the engine exited (crashed, or was not an engine at all); the
  message carries the exit status and the last lines it wrote to stderr.
- ``EngineProtocolError``: the engine wrote a line that breaks the protocol (for example
  ``bestmove`` without a move, or a score that is not a number); the message quotes the line.
- ``EngineTimeoutError``: no answer within the timeout.

After a terminated or protocol error the engine is closed; after a timeout the client sends
``stop`` and stays usable only if the engine then answers.

The client cannot hang on a misbehaving engine: the engine runs in its own process group, which
is killed (SIGKILL) as a whole when the engine is closed after an error, a timeout, or a ``quit``
it ignores; nothing waits on the engine's pipes during cleanup (the reader threads own them, so a
child process that keeps the engine's output open cannot block the client).  An engine started from the
main thread is killed by the kernel when the process that started it dies, however it dies (Linux:
:func:`mavgame.workers.die_with_parent_preexec`), so a league killed with ``kill -9`` leaves no engine.
A line longer than :data:`MAX_LINE` bytes (an engine writing without newlines) is a protocol error, so
the client's memory stays bounded.  The client is strict about ``bestmove`` and tolerant about ``info``: a
malformed ``info`` line is ignored and named in ``GoResult.ignored`` (and logged on the
``mavgame.engines.uci`` logger), as python-chess's engine module does.

The binary: :func:`find_engine` (an environment variable, PATH, :data:`ENGINE_DIRS`) finds Stockfish
(:func:`find_stockfish`) and Fairy-Stockfish (:func:`mavgame.engines.fairy.find_fairy_stockfish`).
"""
from __future__ import annotations

import collections
import logging
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .uci_protocol import (MOVE_RE, STARTPOS, EngineError, EngineProtocolError, EngineTerminatedError,
                           EngineTimeoutError, GoResult, InfoLine, UCIOption, parse_info, parse_int, parse_option)

__all__ = ["UCIEngine", "find_engine", "find_stockfish", "ENGINE_DIRS"]

# Default search timeout for searches not limited by time (nodes, depth): generous but finite.
DEFAULT_SEARCH_TIMEOUT = 600.0

# The longest line accepted from an engine (bytes); longer is a protocol error.
MAX_LINE = 1 << 20

_log = logging.getLogger("mavgame.engines.uci")


# ---------------------------------------------------------------------------------------------
# the engine binary

#: where an engine binary is looked for when it is not on PATH (Debian's packages install to /usr/games)
ENGINE_DIRS = ("/usr/games", "/usr/local/bin", "/opt/homebrew/bin")


def find_engine(name: str, env_var: str, dirs: Sequence[str] = ENGINE_DIRS) -> Optional[str]:
    """Path of the engine binary ``name``: ``$env_var`` when it is set (None if it names nothing that exists
    or is on PATH), else ``name`` on PATH, else the first executable ``dir/name`` of ``dirs``; None if none."""
    env = os.environ.get(env_var)
    if env:
        return env if os.path.exists(env) or shutil.which(env) else None
    p = shutil.which(name)
    if p:
        return p
    for d in dirs:
        cand = os.path.join(d, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def find_stockfish() -> Optional[str]:
    """Path of a Stockfish binary: $MAVGAME_STOCKFISH, ``stockfish`` on PATH, or Debian's /usr/games/stockfish
    (:func:`find_engine`)."""
    return find_engine("stockfish", "MAVGAME_STOCKFISH")


def _resolve(path: str) -> str:
    if os.sep in path or (os.altsep and os.altsep in path):
        return path
    if path == "stockfish":
        sf = find_stockfish()
        if sf:
            return sf
    found = shutil.which(path)
    return found or path


# ---------------------------------------------------------------------------------------------
# the engine


class _TooLong:
    """Put on the line queue when the engine wrote more than MAX_LINE bytes without a newline."""

    def __init__(self, n: int, head: bytes):
        self.n = n
        self.head = head


def _pump(fd: int, put: Callable[[object], None], limit: int, stop_at_limit: bool) -> None:
    """Reads an engine pipe (the thread owns ``fd`` and closes it) and hands each line to ``put``;
    None at the end.  A line over ``limit`` bytes: _TooLong and the end (``stop_at_limit``), or cut
    to ``limit`` bytes with the rest of it discarded (stderr, which is only kept for messages)."""
    buf = bytearray()
    skipping = False
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not chunk:
                break
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                if not skipping:
                    put(bytes(buf[:nl]).decode("utf-8", "replace").rstrip("\r"))
                skipping = False
                del buf[:nl + 1]
            if len(buf) > limit:
                if stop_at_limit:
                    put(_TooLong(len(buf), bytes(buf[:40])))
                    return
                if not skipping:
                    put(bytes(buf[:limit]).decode("utf-8", "replace") + " [...]")
                skipping = True
                buf.clear()
        if buf and not skipping:
            put(bytes(buf).decode("utf-8", "replace").rstrip("\r"))
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
        put(None)


class UCIEngine:
    """A UCI engine subprocess with a synchronous API.

    Parameters
    ----------
    path:
        The engine binary: a path, a name on PATH, or "stockfish" (also found at /usr/games).
    options:
        UCI options to set after the handshake, e.g. ``{"Skill Level": 3, "Threads": 1}``.
    timeout:
        Seconds to wait for the handshake and for ``isready`` answers.
    search_timeout:
        Seconds to wait for a search limited by nodes or depth (time-limited searches wait for
        their time plus ``timeout``); None waits forever (the engine's death is still detected).
    args:
        Extra command-line arguments for the engine.
    """

    def __init__(self, path: str = "stockfish", options: Optional[Dict[str, object]] = None,
                 timeout: float = 10.0, search_timeout: Optional[float] = DEFAULT_SEARCH_TIMEOUT,
                 args: Sequence[str] = (), cwd: Optional[str] = None, env: Optional[dict] = None):
        self.path = _resolve(path)
        self.timeout = float(timeout)
        self.search_timeout = search_timeout
        self.id: Dict[str, str] = {}
        self.options: Dict[str, UCIOption] = {}
        self._lines: "queue.Queue[object]" = queue.Queue()
        self._stderr: "collections.deque[str]" = collections.deque(maxlen=20)
        self.ignored: "collections.deque[str]" = collections.deque(maxlen=100)  # info lines ignored (why)
        self._closed = False
        self._in_search = False
        self._values: Dict[str, str] = {}
        self._pid = os.getpid()  # engines belong to the process that started them (not to forks)
        # the engine's output pipes belong to the reader threads alone (they close them at the end),
        # so that no cleanup here ever waits on a pipe that a child of the engine keeps open
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        from ..workers import die_with_parent_preexec
        try:
            # the engine dies with this process, however it ends (a league worker killed with its league)
            self._proc = subprocess.Popen(
                [self.path, *args], stdin=subprocess.PIPE, stdout=out_w, stderr=err_w, cwd=cwd, env=env,
                text=True, bufsize=1, errors="replace", start_new_session=True,
                preexec_fn=die_with_parent_preexec())
        except OSError as e:
            self._closed = True
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            raise EngineTerminatedError(f"cannot start engine {self.path!r}: {e}") from None
        os.close(out_w)
        os.close(err_w)
        # the reader threads hold the pipes and buffers, not the engine, so an engine that is dropped
        # without close() is still garbage-collected (and its process stopped by __del__)
        self._reader = threading.Thread(target=_pump, args=(out_r, self._lines.put, MAX_LINE, True),
                                        name="uci-stdout", daemon=True)
        self._reader.start()
        errbuf = self._stderr
        self._errreader = threading.Thread(
            target=_pump, args=(err_r, lambda x: x is not None and errbuf.append(x), 4096, False),
            name="uci-stderr", daemon=True)
        self._errreader.start()
        try:
            self._handshake()
            if options:
                self.configure(options)
        except BaseException:
            self.close()
            raise

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.id.get("name") or os.path.basename(self.path)

    def _died(self, waiting_for: str) -> EngineTerminatedError:
        try:
            rc = self._proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            rc = None
        self._errreader.join(timeout=1.0)
        err = " | ".join(self._stderr)
        how = f"exited with status {rc}" if rc is not None else "closed its output"
        if rc is not None and rc < 0:
            how = f"was killed by signal {-rc}"
        msg = f"engine {self.name!r} ({self.path}) {how} while {waiting_for}"
        if err:
            msg += f"; its stderr ends with: {err}"
        self._closed = True
        self._kill()
        return EngineTerminatedError(msg)

    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            raise EngineError(f"engine {self.name!r} was started by process {self._pid}, not this one "
                              f"({os.getpid()}, a fork?): start a new engine in this process")

    def _send(self, cmd: str) -> None:
        if self._closed:
            raise EngineError(f"engine {self.name!r} is closed")
        self._check_process()
        try:
            self._proc.stdin.write(cmd + "\n")  # type: ignore[union-attr]
            self._proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError):
            raise self._died(f"receiving {cmd.split()[0]!r}") from None

    def _readline(self, deadline: Optional[float], waiting_for: str) -> str:
        if self._closed:
            raise EngineError(f"engine {self.name!r} is closed")
        self._check_process()
        try:
            if deadline is None:
                line = self._lines.get()
            else:
                remaining = deadline - time.monotonic()
                line = self._lines.get(timeout=max(0.0, remaining))
        except queue.Empty:
            raise EngineTimeoutError(f"engine {self.name!r} did not answer in time while {waiting_for}") from None
        if line is None:
            raise self._died(waiting_for)
        if isinstance(line, _TooLong):
            raise self._protocol_error(f"wrote more than {MAX_LINE} bytes without a newline while {waiting_for} "
                                       f"(it starts {line.head!r})")
        return line  # type: ignore[return-value]

    def _protocol_error(self, msg: str) -> EngineProtocolError:
        self.close()
        return EngineProtocolError(f"engine {self.name!r}: {msg}")

    def _handshake(self) -> None:
        self._send("uci")
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._readline(deadline, "waiting for 'uciok' after 'uci'")
            toks = line.split()
            if not toks:
                continue
            if toks[0] == "uciok":
                break
            if toks[0] == "id" and len(toks) >= 3:
                self.id[toks[1]] = line.split(None, 2)[2]
            elif toks[0] == "option":
                try:
                    opt = parse_option(line)
                except EngineProtocolError as e:
                    raise self._protocol_error(str(e)) from None
                self.options[opt.name.lower()] = opt
        self.isready()

    # -- public API ------------------------------------------------------------------------------

    def isready(self, timeout: Optional[float] = None) -> None:
        """Send ``isready`` and wait for ``readyok`` (output in between is discarded)."""
        self._send("isready")
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            line = self._readline(deadline, "waiting for 'readyok' after 'isready'")
            if line.strip() == "readyok":
                return

    def set_option(self, name: str, value: object = None) -> None:
        """Set one UCI option (checked against what the engine declared)."""
        opt = self.options.get(name.lower())
        if opt is None:
            known = ", ".join(sorted(o.name for o in self.options.values()))
            raise ValueError(f"engine {self.name!r} has no option {name!r} (it has: {known})")
        text = opt.check(value)
        if opt.type == "button":
            self._send(f"setoption name {opt.name}")
        else:
            self._send(f"setoption name {opt.name} value {text}")
            self._values[opt.name.lower()] = text

    def configure(self, options: Dict[str, object]) -> None:
        """Set several options, then wait until the engine is ready."""
        for k, v in options.items():
            self.set_option(k, v)
        self.isready()

    def option_value(self, name: str) -> Optional[str]:
        """The value last set for an option (or its declared default)."""
        key = name.lower()
        if key in self._values:
            return self._values[key]
        opt = self.options.get(key)
        return opt.default if opt else None

    def new_game(self) -> None:
        """Send ``ucinewgame`` (clears the engine's hash) and wait until ready."""
        self._send("ucinewgame")
        self.isready()

    def _position(self, fen: Optional[str], moves: Iterable[str]) -> None:
        mv = [str(m) for m in moves]
        for m in mv:
            if not MOVE_RE.match(m):
                raise ValueError(f"malformed UCI move {m!r}")
        if fen is not None and ("\n" in fen or not fen.strip()):
            raise ValueError(f"malformed FEN {fen!r}")
        cmd = "position startpos" if fen is None or fen.strip() == STARTPOS else f"position fen {fen.strip()}"
        if mv:
            cmd += " moves " + " ".join(mv)
        self._send(cmd)

    def go(self, fen: Optional[str] = None, moves: Iterable[str] = (), *, movetime: Optional[int] = None,
           nodes: Optional[int] = None, depth: Optional[int] = None, wtime: Optional[int] = None,
           btime: Optional[int] = None, winc: Optional[int] = None, binc: Optional[int] = None,
           multipv: Optional[int] = None, searchmoves: Optional[Sequence[str]] = None,
           timeout: Optional[float] = None) -> GoResult:
        """Search a position (``fen`` or the start position, then ``moves``) and return the result.

        Limits: ``movetime`` (ms), ``nodes``, ``depth``, clock times (ms); with none of them the
        engine searches to depth 10.  ``multipv`` sets the MultiPV option for this search.
        ``timeout`` (seconds) defaults to the movetime plus :attr:`timeout`, or :attr:`search_timeout`.
        """
        if multipv is not None:
            if "multipv" not in self.options:
                if multipv != 1:
                    raise ValueError(f"engine {self.name!r} has no MultiPV option")
            elif self.option_value("MultiPV") != str(int(multipv)):
                self.set_option("MultiPV", int(multipv))
        self._position(fen, moves)
        self.isready()
        parts = ["go"]
        for key, v in (("movetime", movetime), ("nodes", nodes), ("depth", depth), ("wtime", wtime),
                       ("btime", btime), ("winc", winc), ("binc", binc)):
            if v is not None:
                if int(v) < 0 or (key in ("nodes", "depth") and int(v) < 1):
                    raise ValueError(f"{key} must be positive, not {v}")
                parts += [key, str(int(v))]
        if len(parts) == 1:
            parts += ["depth", "10"]
        if searchmoves:  # last: it takes the rest of the line
            for m in searchmoves:
                if not MOVE_RE.match(str(m)):
                    raise ValueError(f"malformed UCI move {m!r} in searchmoves")
            parts += ["searchmoves", *map(str, searchmoves)]
        if timeout is None:
            if movetime is not None:
                timeout = movetime / 1000.0 + self.timeout
            elif wtime is not None or btime is not None:
                timeout = max(wtime or 0, btime or 0) / 1000.0 + self.timeout
            else:
                timeout = self.search_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        self._send(" ".join(parts))
        self._in_search = True
        latest: Dict[int, InfoLine] = {}
        ignored: List[str] = []
        while True:
            try:
                line = self._readline(deadline, f"searching ({' '.join(parts)})")
            except EngineTimeoutError:
                self._recover_after_timeout()
                raise
            toks = line.split()
            if not toks:
                continue
            if toks[0] == "info":
                try:
                    info = parse_info(line)
                except EngineProtocolError as e:  # tolerated: named in the result and logged
                    msg = f"ignored a malformed info line ({e})"
                    ignored.append(msg)
                    self.ignored.append(msg)
                    _log.warning("engine %r: %s", self.name, msg)
                    continue
                if info is None:
                    continue
                # the latest line per multipv index: engines end a search with a full block of
                # lines (Stockfish), which then replaces all earlier ones
                prev = latest.get(info.multipv)
                if not info.pv and prev is not None:
                    info.pv = prev.pv
                latest[info.multipv] = info
            elif toks[0] == "bestmove":
                self._in_search = False
                if len(toks) < 2:
                    raise self._protocol_error(f"'bestmove' without a move: {line!r}")
                best = toks[1]
                if best in ("(none)", "none", "0000"):
                    best = None
                elif not MOVE_RE.match(best):
                    raise self._protocol_error(f"malformed best move {best!r} in line: {line!r}")
                ponder = None
                if len(toks) >= 4 and toks[2] == "ponder":
                    if not MOVE_RE.match(toks[3]):
                        raise self._protocol_error(f"malformed ponder move {toks[3]!r} in line: {line!r}")
                    ponder = toks[3]
                lines = [latest[k] for k in sorted(latest)]
                return GoResult(bestmove=best, ponder=ponder, lines=lines, ignored=ignored)
            # other lines (engine chatter) are ignored, as the protocol asks

    def _recover_after_timeout(self) -> None:
        """After a search timeout: send stop and drain to bestmove; close the engine if it stays silent."""
        if self._closed:
            return
        try:
            self._send("stop")
            deadline = time.monotonic() + max(1.0, min(self.timeout, 5.0))
            while True:
                line = self._readline(deadline, "waiting for 'bestmove' after 'stop'")
                if line.startswith("bestmove"):
                    self._in_search = False
                    return
        except EngineError:
            self.close()

    def play(self, fen: Optional[str] = None, moves: Iterable[str] = (), **limits) -> Optional[str]:
        """The engine's best move (UCI text) for a position; None if it has no legal move."""
        return self.go(fen, moves, **limits).bestmove

    def analyse(self, fen: Optional[str] = None, moves: Iterable[str] = (), multipv: int = 1,
                **limits) -> List[InfoLine]:
        """The final principal variations (best first), ``multipv`` of them at most."""
        return self.go(fen, moves, multipv=multipv, **limits).lines

    def perft(self, depth: int, fen: Optional[str] = None, moves: Iterable[str] = (),
              timeout: Optional[float] = None) -> Tuple[int, Dict[str, int]]:
        """``go perft depth``: the total leaf count and the count below each legal move."""
        if int(depth) < 1:
            raise ValueError(f"perft depth must be >= 1, not {depth}")
        self._position(fen, moves)
        self.isready()
        cmd = f"go perft {int(depth)}"
        self._send(cmd)
        to = self.search_timeout if timeout is None else timeout
        deadline = None if to is None else time.monotonic() + to
        per_move: Dict[str, int] = {}
        while True:
            line = self._readline(deadline, f"running '{cmd}'")
            s = line.strip()
            if not s or s.startswith("info"):
                continue
            if s.startswith("Nodes searched"):
                tail = s.split(":", 1)[1].strip() if ":" in s else ""
                total = parse_int(tail, line, "node count") if tail else None
                if total is None:
                    raise self._protocol_error(f"malformed perft total: {line!r}")
                if per_move and sum(per_move.values()) != total:
                    raise self._protocol_error(
                        f"perft total {total} is not the sum {sum(per_move.values())} of the per-move counts")
                return total, per_move
            m = re.match(r"^(\S+)\s*:\s*(\S+)$", s)
            if m and MOVE_RE.match(m.group(1)):
                try:
                    per_move[m.group(1)] = int(m.group(2))
                except ValueError:
                    raise self._protocol_error(f"malformed perft count in line: {line!r}") from None
            elif m:
                raise self._protocol_error(f"malformed perft line: {line!r}")
            # anything else: engine chatter, ignored

    @property
    def closed(self) -> bool:
        return self._closed

    def _kill(self) -> None:
        """SIGKILL to the engine's whole process group (its children too), then reap it; never blocks
        on a pipe (the output pipes are the reader threads', which end when the last writer is gone)."""
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)  # the engine runs in its own session and group
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - best effort
            pass
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()  # every command was flushed when sent: nothing left to block on
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        """Ask the engine to quit (kill it if it does not within a second) and release its pipes."""
        if getattr(self, "_proc", None) is None:
            return
        if getattr(self, "_pid", os.getpid()) != os.getpid():
            self._closed = True  # a forked copy: the engine belongs to the parent, leave it running
            return
        if not self._closed:
            self._closed = True
            try:
                if self._proc.poll() is None:
                    self._proc.stdin.write("quit\n")  # type: ignore[union-attr]
                    self._proc.stdin.flush()  # type: ignore[union-attr]
                    self._proc.wait(timeout=1.0)
            except Exception:  # noqa: BLE001 - broken pipe, timeout: kill below
                pass
        self._kill()

    def __enter__(self) -> "UCIEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running"
        return f"<UCIEngine {self.name!r} ({self.path}) {state}>"
