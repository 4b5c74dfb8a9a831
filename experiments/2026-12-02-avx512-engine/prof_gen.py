"""Generation at one batch size, repeated, on the shipped model (for perf record): python prof_gen.py BATCH REPS."""
import sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "bench"))
from inference import prompts_of_random_games
from mavgame.model.inference import MAVModel, shipped_model_path
m = MAVModel.load(shipped_model_path("connect_four"), backend="native", threads=1)
ps = prompts_of_random_games(64)
b = int(sys.argv[1])
sub = ps[:8] if b == 1 else ps
t0 = time.thread_time()
for _ in range(int(sys.argv[2])):
    m.generate(sub, batch_size=b)
print(m.backend.engine.kernel, b, time.thread_time() - t0)
