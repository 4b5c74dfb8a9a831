"""mavgame bench --peers (mavgame.cli.bench): the summary of the peer benchmarks (the benchmarks themselves are not tests: no timings here)."""
import pytest

from mavgame.cli import bench


def test_summary_rows_and_ratios():
    mcts = [{"game": "chess", "setting": "playout", "sims": 100, "mavgame_sims_per_s": 2000.0,
             "peer_sims_per_s": 100.0, "peer": "OpenSpiel C++ MCTSBot"}]
    perft = [{"position": "startpos", "depth": 5, "mavgame_nps": 4e8, "stockfish_nps": 2e8,
              "mavgame_instructions_per_leaf": 20.0, "stockfish_instructions_per_leaf": 50.0, "callgrind_depth": 5}]
    c4 = {"sets": [{"set": "end_easy", "positions": 10, "mean_s": 1e-5, "published_s": 4.6e-6}],
          "overhead": {"score only": {"solve_s": 2e-6, "raw_s": 1e-6, "c_s": 1e-7}}}
    rows = bench._rows_mcts(mcts) + bench._rows_perft(perft) + bench._rows_c4(c4)
    text = bench.summary(rows)
    assert "20.00x" in text                      # 2000 / 100 sims/s
    assert "2.00x" in text and "2.50x" in text   # perft nodes/s, and 50 / 20 instructions per leaf
    assert "0.50x" in text                       # solve() call at twice the raw call's time
    assert "no --pons binary given" in text
    assert bench.summary([("x", "y", 1.0, None, "u")]).splitlines()[1].split()[-2] == "-"


def test_missing_bench_dir_is_a_clear_error(tmp_path, capsys):
    from mavgame.cli import main
    with pytest.raises(SystemExit, match="no benchmark scripts in"):
        main(["bench", "--peers", "--bench-dir", str(tmp_path)])
    assert (bench.default_bench_dir() / "mcts.py").is_file()


def test_signature_is_deterministic_and_counts_known_trees(capsys):
    """`mavgame bench --signature`: the same number twice, built from counts with known parts (perft tables)."""
    from mavgame.cli import main
    a, b = bench.signature(model=False), bench.signature(model=False)
    assert a == b and a["total"] == sum(v for k, v in a.items() if k != "total")
    assert a["perft chess start 5"] == 4_865_609 and a["perft kiwipete 4"] == 4_085_603
    assert main(["bench", "--signature", "--no-model"]) == 0
    assert capsys.readouterr().out.strip() == f"signature {a['total']}"
