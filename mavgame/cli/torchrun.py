"""Re-running a ``mavgame`` command in several processes under torchrun on this node (``--nproc N``): the
parsed command turned back into its command line, and the launch.  ``mavgame train`` uses it."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, List, Optional

__all__ = ["command_line", "env_world_size", "launch"]


def env_world_size() -> int:
    """``WORLD_SIZE`` of the torchrun process this is (1 outside torchrun or when it does not parse)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1") or 1)
    except ValueError:
        return 1


def command_line(args: argparse.Namespace, add_arguments: Callable[[argparse.ArgumentParser], None],
                 command: str, drop: tuple = ("nproc",)) -> List[str]:
    """``args`` (a parsed ``mavgame COMMAND``, whose options ``add_arguments`` defines) back as a command line,
    ``command`` first, without the options in ``drop``: every option whose value differs from its default (the
    command torchrun starts)."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    out = [command]
    for a in p._actions:
        if not a.option_strings or a.dest in drop or a.dest == "help":
            continue
        v = getattr(args, a.dest, a.default)
        if v == a.default:
            continue
        flag = a.option_strings[-1] if a.option_strings[-1].startswith("--") else a.option_strings[0]
        if isinstance(a, argparse._StoreTrueAction):
            out.append(flag)
        elif isinstance(a, argparse._AppendAction):
            for item in v:
                if isinstance(item, tuple):   # KEY=VALUE, VALUE as JSON (what the option's reader takes back)
                    item = f"{item[0]}={json.dumps(item[1])}"
                out += [flag, str(item)]
        else:
            out += [flag, str(v)]
    return out


def launch(args: argparse.Namespace, add_arguments: Callable[[argparse.ArgumentParser], None], command: str,
           threads: Optional[int] = None) -> int:
    """Run the command in ``args.nproc`` processes under torchrun on this node; their exit status.  Each
    process gets ``OMP_NUM_THREADS`` = ``threads`` (1 when 0 or None) unless the environment sets it."""
    import subprocess
    from ..model.distributed import launch_command
    cmd = launch_command(args.nproc, command_line(args, add_arguments, command))
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(threads or 1))
    print(f"mavgame {command}: {args.nproc} processes: {' '.join(cmd)}", file=sys.stderr)
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:   # torchrun got the Ctrl-C as well and stops its processes
        proc.wait()
        raise
