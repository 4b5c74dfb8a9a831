"""A fake UCI engine for tests, written to a file by the test that needs it.

`write_fake_engine(dir, mode, trigger)` writes an executable Python script that speaks UCI for
chess and Chess960 with mavgame's own move generator (so its moves are legal) and misbehaves in
the chosen `mode` once the last `position` command contains `trigger` (always if None):

- "ok": plays the first legal move, with one info line per MultiPV line;
- "crash": exits with status 3 after writing "fake engine: simulated crash" to stderr;
- "crash_at_start": exits with status 4 before answering `uci`;
- "no_move": answers `bestmove` without a move;
- "bad_score": sends "info depth 1 score cp abc pv <move>";
- "bad_move": answers `bestmove zz99`;
- "illegal": answers a well-formed but illegal move (a1a1... from the wrong side);
- "hang": never answers `go`;
- "chatter": prints unrelated lines everywhere (must be ignored);
- "garbage": before its answer writes bytes that are not UTF-8 and malformed `info` lines;
- "no_newline": writes megabytes without a newline instead of answering `go`;
- "deaf": ignores SIGTERM and `quit`, and never answers `go`;
- "child_holds_stdout": starts a child process that keeps the engine's stdout open (its pid in
  the file ``<engine>.child``) and never answers `go`; "escaped_child": the same with the child
  in a session of its own (outside the engine's process group).
"""
import stat
import sys
from pathlib import Path

import mavgame

REPO = str(Path(mavgame.__file__).resolve().parents[1])

SCRIPT = r'''
import sys, time
sys.path.insert(0, {repo!r})
from mavgame import _core

MODE = {mode!r}
TRIGGER = {trigger!r}
out = sys.stdout

def say(s):
    out.write(s + "\n")
    out.flush()

if MODE == "crash_at_start":
    sys.stderr.write("fake engine: cannot start\n")
    sys.exit(4)

if MODE == "deaf":
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

state = None
position_line = ""
opts = {{"MultiPV": 1, "UCI_Chess960": "false"}}

def triggered():
    return TRIGGER is None or TRIGGER in position_line

def set_position(line):
    global state, position_line
    position_line = line
    toks = line.split()
    game = "chess960" if opts["UCI_Chess960"] == "true" else "chess"
    i = 1
    if toks[1] == "startpos":
        state = _core.State(game)
        i = 2
    else:
        j = toks.index("moves") if "moves" in toks else len(toks)
        state = _core.State(game, " ".join(toks[2:j]))
        i = j
    if i < len(toks) and toks[i] == "moves":
        for m in toks[i + 1:]:
            state.push(m)

for line in sys.stdin:
    line = line.strip()
    if MODE == "chatter":
        say("hello from the fake engine")
    if line == "uci":
        say("id name FakeFish 1.0")
        say("id author tests")
        say("option name Threads type spin default 1 min 1 max 8")
        say("option name Hash type spin default 16 min 1 max 1024")
        say("option name MultiPV type spin default 1 min 1 max 500")
        say("option name Skill Level type spin default 20 min 0 max 20")
        say("option name UCI_Chess960 type check default false")
        say("option name Style type combo default Normal var Solid var Normal var Risky")
        say("option name Clear Hash type button")
        say("uciok")
    elif line == "isready":
        say("readyok")
    elif line.startswith("setoption"):
        toks = line.split()
        name = " ".join(toks[2:toks.index("value")]) if "value" in toks else " ".join(toks[2:])
        if "value" in toks:
            opts[name] = " ".join(toks[toks.index("value") + 1:])
    elif line == "ucinewgame":
        pass
    elif line.startswith("position"):
        set_position(line)
    elif line.startswith("go perft"):
        depth = int(line.split()[2])
        acts, counts = state.perft_divide(depth)
        for a, c in zip(acts.tolist(), counts.tolist()):
            say(f"{{state.action_to_str(a)}}: {{c}}")
        say("")
        say(f"Nodes searched: {{int(counts.sum())}}")
    elif line.startswith("go"):
        if triggered():
            if MODE == "crash":
                sys.stderr.write("fake engine: simulated crash\n")
                sys.stderr.flush()
                sys.exit(3)
            if MODE in ("hang", "deaf"):
                continue
            if MODE in ("child_holds_stdout", "escaped_child"):
                import subprocess
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                         start_new_session=MODE == "escaped_child")
                with open(__file__ + ".child", "w") as f:
                    f.write(str(child.pid))
                continue
            if MODE == "no_newline":
                chunk = "x" * 65536
                try:
                    for _ in range(20000):
                        out.write(chunk)
                except BrokenPipeError:
                    pass
                sys.exit(0)
            if MODE == "garbage":
                out.flush()
                sys.stdout.buffer.write(b"\xff\xfe garbage \x00\x80 bytes\n")
                sys.stdout.buffer.flush()
                say("info depth x score cp 12 pv e2e4")
                say("info depth 1 score cp 1.5")
                say("info depth 1 score wins 3 pv e2e4")
            if MODE == "no_move":
                say("bestmove")
                continue
            if MODE == "bad_move":
                say("bestmove zz99")
                continue
            if MODE == "illegal":
                say("bestmove a1a1")
                continue
        moves = state.legal_moves
        if not moves:
            say("info depth 0 score mate 0")
            say("bestmove (none)")
            continue
        k = min(int(opts.get("MultiPV", 1)), len(moves))
        for i in range(k):
            if MODE == "bad_score" and triggered():
                say(f"info depth 1 multipv {{i + 1}} score cp abc pv {{moves[i]}}")
            else:
                say(f"info depth 1 seldepth 1 multipv {{i + 1}} score cp {{-10 * i}} nodes 1 nps 1 time 0 pv {{moves[i]}}")
        say(f"bestmove {{moves[0]}}")
    elif line == "stop":
        pass
    elif line == "quit":
        if MODE != "deaf":
            break
'''


def write_fake_engine(directory, mode="ok", trigger=None, name=None) -> str:
    path = Path(directory) / (name or f"fake_engine_{mode}.py")
    path.write_text(f"#!{sys.executable}\n" + SCRIPT.format(repo=REPO, mode=mode, trigger=trigger))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)
