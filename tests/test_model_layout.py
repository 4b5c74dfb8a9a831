"""The split of ``mavgame.model`` by concern (issue 48): the data pipeline in ``mavgame.datasets``, the IDP policy
network in ``mavgame.policy``, inference a package of its own, the library code of tools/ in the package; the old
module paths are gone with no alias left behind."""
import importlib
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(importlib.import_module("mavgame").__file__).parent

MOVED = {
    "mavgame.model.records": "mavgame.datasets.records", "mavgame.model.store": "mavgame.datasets.store",
    "mavgame.model.dataset": "mavgame.datasets.dataset", "mavgame.model.generate": "mavgame.datasets.positions",
    "mavgame.model.pgn": "mavgame.datasets.pgn", "mavgame.model.ood": "mavgame.datasets.ood",
    "mavgame.model.search_data": "mavgame.datasets.search_data", "mavgame.model.symmetry": "mavgame.datasets.symmetry",
    "mavgame.model.data_stats": "mavgame.datasets.stats", "mavgame.model.data": "mavgame.datasets",
    "mavgame.model.policy": "mavgame.policy.network", "mavgame.model.policy_export": "mavgame.policy.export",
    "mavgame.model.policy_rl": "mavgame.policy.rl",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_model_paths_are_gone(old):
    if MOVED[old] in ("mavgame.policy.network", "mavgame.policy.rl"):
        pytest.importorskip("torch")
    importlib.import_module(MOVED[old])
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_inference_package_hands_on_its_public_names():
    """``mavgame.model.inference`` is a package whose face names every public name the old module had; the
    vocabulary fingerprint lives with the tokenizer, not here."""
    from mavgame import mav
    from mavgame.model import inference
    from mavgame.model.inference import backends, decode, mav_model, metrics, reference, scoring, shipped
    assert inference.MAVModel is mav_model.MAVModel and inference.generate_ids is decode.generate_ids
    assert inference.NativeBackend is backends.NativeBackend and inference.NumpyTransformer is reference.NumpyTransformer
    assert inference.value_scorer is scoring.value_scorer and inference.evaluate_records is metrics.evaluate_records
    assert inference.shipped_model_path is shipped.shipped_model_path
    assert sorted(inference.__all__) == sorted(n for n in vars(inference) if not n.startswith("_")
                                               and not isinstance(getattr(inference, n), type(inference)))
    assert shipped.shipped_model_path("connect_four").is_file()     # the data folder from the package's depth
    assert not hasattr(inference, "vocab_fingerprint") and len(mav.vocab_fingerprint(mav.Tokenizer())) == 16


def test_datasets_face_loads_nothing_until_asked():
    """Importing one module of ``mavgame.datasets`` loads no other (the package's names load on first use)."""
    code = ("import sys\nimport mavgame.datasets.records\n"
            "others = sorted(m for m in sys.modules if m.startswith('mavgame.datasets.') and m != 'mavgame.datasets.records')\n"
            "assert not others, others\n"
            "import mavgame.datasets as d\nassert d.PositionStore.__module__ == 'mavgame.datasets.store'\n"
            "assert 'mavgame.datasets.store' in sys.modules and 'mavgame.datasets.dataset' not in sys.modules\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    import mavgame.datasets
    with pytest.raises(AttributeError, match="no_such_name"):
        mavgame.datasets.no_such_name


def test_generation_workers_pickle_by_their_new_module():
    from mavgame.datasets import pgn, positions
    for f in (positions._gen_init, positions._gen_games, pgn._pgn_job):
        data = pickle.dumps(f)
        assert f.__module__.encode() in data and b"mavgame.model" not in data
        assert pickle.loads(data) is f


@pytest.mark.parametrize("module", ["mavgame.datasets.merge", "mavgame.model.grow", "mavgame.analysis.mav_eval",
                                    "mavgame.analysis.mav_is_eval", "mavgame.analysis.hard_positions",
                                    "mavgame.analysis.c4_play_positions", "mavgame.analysis.c4_blunders",
                                    "mavgame.analysis.elo_vs_sims", "mavgame.analysis.mav_is_ladder"])
def test_former_tools_run_as_modules(module):
    """The library code of tools/ is in the package, each run with ``python -m``."""
    r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: python -m {module}")


def test_tools_keeps_no_library_code():
    """The scripts whose code moved into the package or into an experiment's folder left tools/."""
    left = {"merge_position_sets.py", "grow_model.py", "mav_eval.py", "mav_is_eval.py", "hard_positions.py",
            "c4_play_positions.py", "c4_blunders.py", "elo_vs_sims.py", "mav_is_ladder.py", "policy_rl_plot.py",
            "azdb_report.py", "azdb_seeds.py", "c4_outcome_probe.py", "mav_is_copy_probe.py",
            "tree_children_positions.py"}
    tools = {p.name for p in (PKG.parent / "tools").iterdir() if p.is_file()}
    assert not tools & left, sorted(tools & left)
    assert {"gen_vocab.py", "export_checkpoint.py"} <= tools


def test_split_packages_hold_no_long_files():
    """No file of the split packages over ~600 lines (issue 48)."""
    long = [(str(f.relative_to(PKG)), n) for d in ("model", "datasets", "policy", "analysis")
            for f in sorted((PKG / d).rglob("*.py")) if (n := len(f.read_text().splitlines())) > 610]
    assert not long, long
