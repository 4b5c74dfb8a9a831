"""The README's Python examples run as written and say what they print (issue 21: the model example showed a
position the shipped model gets wrong, without comment).  About a second since the solver has its book;
notebooks/model.ipynb checks the same claims."""
import contextlib
import io
import re
from pathlib import Path

from fake_uci import REPO


def test_readme_python_examples_run_and_hold():
    text = (Path(REPO) / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    ns = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for b in blocks:
            exec(compile(b, "README.md", "exec"), ns)
    # the model example: the model is right on `win`, and MAV-MCTS plays the win in one of c4
    assert "[%best_action 4]" in out.getvalue()
    assert all(v > 0.5 for v in ns["out"].values("mean").values())
    assert ns["c4"].action_to_str(int(ns["agent"].act(ns["c4"]))) in ("3", "7")
    # and the claim about the searchless agent in the text below the example
    from mavgame.agents.mav import MAVGreedyAgent
    (pr, mo), = ns["model"].analyse([ns["c4"]])
    vals = mo.values("mean")
    assert pr.best == "3" and max(vals.values()) - vals["3"] < 0.02  # named best, its value tied with the top
    assert MAVGreedyAgent(ns["model"]).act(ns["c4"]) == "3"
