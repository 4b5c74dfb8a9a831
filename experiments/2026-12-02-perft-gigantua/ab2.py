"""ab2.py ROUNDS A B [C...]: alternate single-rep runs; per position: min of each, median of paired ratio X/A."""
import subprocess, sys, statistics
R = int(sys.argv[1]); bins = sys.argv[2:]
t = {b: {"start": [], "kiwi": []} for b in bins}
for r in range(R):
    order = bins if r % 2 == 0 else bins[::-1]
    for b in order:
        out = subprocess.run(["/tmp/ab/" + b, "1"], capture_output=True, text=True).stdout.split()
        for i in range(0, len(out), 2):
            t[b][out[i]].append(float(out[i + 1]))
a = bins[0]
for pos in ("start", "kiwi"):
    line = [f"{pos:5s}"]
    for b in bins:
        rat = [x / y for x, y in zip(t[b][pos], t[a][pos])]
        line.append(f"{b} min {min(t[b][pos]):.4f} med {statistics.median(t[b][pos]):.4f} ratio-med {statistics.median(rat):.3f}")
    print("  |  ".join(line))
