"""The CUDA kernels (kernels/*.cu, issue 17) against PyTorch on a GPU.

With a CUDA device: builds every kernel file's driver with nvcc (``-DMGK_MAIN``, its C reference linked),
runs it with ``--bench`` (each driver checks every variant against the CPU engine's own function on its test
shapes and on a 1-2B-parameter model's shapes, then times each variant with CUDA events; forward.cu's driver
checks the engine's whole CUDA forward pass against the CPU engine and times nothing), and times the
PyTorch equivalent of every timed shape on the same GPU: ``torch.matmul`` (float32; bfloat16 for the bf16-weight
variants of matmul.cu, 2 and 3 on CUDA cores and 4 on tensor cores), ``F.rms_norm``, ``F.silu(g) * u``
/ ``F.gelu(g, approximate="tanh") * u``, rotary by indexing, ``F.scaled_dot_product_attention`` (decode: one
query over ``max_len`` keys for every row, grouped-query via ``enable_gqa``; prefill without a cached prefix:
a padded causal batch) and ``argmax`` plus the bucket softmax. Interleaved: ``--reps`` rounds of (every driver,
then every torch peer); medians; the ratio torch time / kernel time (above 1: the kernel is faster).

Without a device (no GPU, no driver, a CPU-only build, or torch without CUDA) it says so and measures
nothing; the kernels are then only checked on the CPU harness (``python -m pytest tests/test_kernels.py``).

    python bench/kernels.py [--reps 3]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TIME = re.compile(r"^time (\S+) (.*): ([0-9.]+) us$")


def device_or_reason():
    """None if a CUDA device can be used by both the kernels and torch, else why not."""
    from mavgame import _core
    n, why = _core.cuda_status()
    if n == 0:
        return why
    try:
        import torch
    except ImportError:
        return "torch is not installed (the peer)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device (a CPU build of torch?)"
    if shutil.which("nvcc") is None:
        return "nvcc not found (the drivers are built with it)"
    return None


def build_drivers(out: Path, only=()):
    """Every kernel file's driver, built with nvcc (in parallel; ``MAVGAME_CUDA_ARCH`` adds architecture
    flags, as in setup.py).  forward.cu's (the engine's CUDA forward pass against the CPU engine, on small
    models: checks only, nothing timed) links every other kernel file and the engine's C sources built with
    MG_WITH_CUDA."""
    from concurrent.futures import ThreadPoolExecutor
    out.mkdir(parents=True, exist_ok=True)
    model = ROOT / "csrc" / "model"
    refs = [str(model / n) for n in ("layers.c", "matmul.c", "choose.c")]
    cus = sorted((ROOT / "kernels").glob("*.cu"))
    nvcc = ["nvcc", "-O3", *os.environ.get("MAVGAME_CUDA_ARCH", "").split(), f"-I{ROOT / 'kernels'}",
            f"-I{ROOT / 'csrc'}"]

    def run(cmd):
        subprocess.run(cmd, check=True)

    drivers = [cu for cu in cus if "#ifdef MGK_MAIN" in cu.read_text() and cu.stem != "device"
               and (not only or cu.stem in only)]
    fwd_objs, jobs = [], []
    forward = any(cu.stem == "forward" for cu in drivers)
    for c in refs + [str(model / n) for n in ("engine.c", "generate.c", "prefix_cache.c", "threadpool.c",
                                              "layers_avx2.c")]:
        if forward:
            obj = out / (Path(c).stem + ".o")
            jobs.append(["gcc", "-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L", "-DMG_WITH_CUDA", "-c", c, "-o",
                         str(obj)])
            fwd_objs.append(str(obj))
    for other in cus:  # the kernels forward.cu calls, without their drivers
        if forward and other.stem != "forward":
            obj = out / (other.stem + "-cu.o")
            jobs.append([*nvcc, "-c", str(other), "-o", str(obj)])
            fwd_objs.append(str(obj))
    for cu in drivers:
        if cu.stem != "forward":
            jobs.append([*nvcc, "-DMGK_MAIN", str(cu), *refs, "-o", str(out / cu.stem)])
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(run, jobs))
    if forward:
        run([*nvcc, "-DMGK_MAIN", str(ROOT / "kernels" / "forward.cu"), *fwd_objs, "-lpthread", "-o",
             str(out / "forward")])
    return [out / cu.stem for cu in drivers]


def run_driver(exe: Path):
    """(timings, whether every check passed); a failure is printed and the other drivers go on."""
    res = subprocess.run([str(exe), "--bench"], capture_output=True, text=True, timeout=600)
    ok = res.returncode == 0 and "ALL CHECKS PASSED" in res.stdout
    if not ok:
        bad = [line for line in res.stdout.splitlines() if "FAIL" in line or "mismatch" in line or "failed" in line]
        print(f"{exe.name}: THE CHECKS FAILED ON THE GPU (rc {res.returncode}):\n" + "\n".join(bad[:40])
              + f"\n{res.stdout[-1500:]}{res.stderr[-1500:]}")
    return {(m.group(1), m.group(2)): float(m.group(3))
            for m in (TIME.match(line) for line in res.stdout.splitlines()) if m}, ok


def fields(spec: str):
    return {k: v for k, v in (kv.split("=") for kv in spec.split() if "=" in kv)}


def torch_peer(name: str, spec: str):
    """A function running the torch equivalent of one timed driver shape, or None (and why)."""
    import torch
    import torch.nn.functional as F
    dev, f = "cuda", fields(spec)
    g = {k: int(v) for k, v in f.items() if v.lstrip("-").isdigit()}
    if name.startswith("rmsnorm"):
        x, w = torch.randn(g["n"], g["d"], device=dev), torch.randn(g["d"], device=dev)
        return lambda: F.rms_norm(x, (g["d"],), w, 1e-5), ""
    if name.startswith("matmul") and name.endswith("-bf16"):
        # bf16 weights (kernels 2, 3 and 4 of matmul.cu): the peer is torch's bf16 product, on tensor cores
        # (cuBLAS), with x in bf16 as kernel 4 rounds it (kernels 2 and 3 keep x in float32)
        x = torch.randn(g["n"], g["in"], device=dev, dtype=torch.bfloat16)
        w = torch.randn(g["in"], g["out"], device=dev, dtype=torch.bfloat16)
        return lambda: x @ w, "torch: bf16 x @ bf16 w"
    if name.startswith("matmul"):
        x, w = torch.randn(g["n"], g["in"], device=dev), torch.randn(g["in"], g["out"], device=dev)
        return lambda: x @ w, ""
    if name.startswith("glu"):
        a, u = torch.randn(g["n"], device=dev), torch.randn(g["n"], device=dev)
        if "geglu" in spec:
            return lambda: F.gelu(a, approximate="tanh") * u, ""
        return lambda: F.silu(a) * u, ""
    if name.startswith("rope"):
        n, nh, hd = g["n"], g["nh"], g["hd"]
        v = torch.randn(n, nh, hd, device=dev)
        c, s = torch.randn(n, 1, hd // 2, device=dev), torch.randn(n, 1, hd // 2, device=dev)

        def rope():
            a, b = v[..., : hd // 2], v[..., hd // 2:]
            return torch.cat((a * c - b * s, b * c + a * s), -1)
        return rope, ""
    if name.startswith("attention_decode"):
        r, H, KV, hd, L = g["rows"], g["H"], g["KV"], g["hd"], g["max_len"]
        q = torch.randn(r, H, 1, hd, device=dev)
        k, v = torch.randn(r, KV, L, hd, device=dev), torch.randn(r, KV, L, hd, device=dev)
        return lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=KV != H), "torch: every row at max_len"
    if name.startswith("attention_prefill"):
        if g.get("prefix", 0):
            return None, "no torch peer (rows after a cached prefix)"
        n, T, H, KV, hd = g["seqs"], g["max_rows"], g["H"], g["KV"], g["hd"]
        q = torch.randn(n, H, T, hd, device=dev)
        k, v = torch.randn(n, KV, T, hd, device=dev), torch.randn(n, KV, T, hd, device=dev)
        return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=KV != H),
                "torch: padded to max_rows")
    if name.startswith("choose"):
        z = torch.randn(g["rows"], g["V"], device=dev)
        b = torch.arange(g["buckets"], device=dev)
        return lambda: (z.argmax(1), z[:, b].double().softmax(1)), "torch: plain argmax"
    return None, "no torch peer"


def time_torch(fn, reps=50):
    import torch
    fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    return 1000.0 * a.elapsed_time(b) / reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="interleaved rounds (medians are reported)")
    ap.add_argument("--only", default="", help="comma-separated kernel files to run (e.g. matmul,forward)")
    args = ap.parse_args()
    why = device_or_reason()
    if why is not None:
        print(f"bench/kernels.py: nothing measured: {why}.")
        print("The kernels are checked, not timed, on the CPU harness: python -m pytest tests/test_kernels.py")
        return 0
    import torch
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    exes = build_drivers(ROOT / "build" / "kernels-gpu", [x for x in args.only.split(",") if x])
    ours, theirs, peers, failed = {}, {}, {}, set()
    for _ in range(args.reps):
        for exe in exes:
            times, ok = run_driver(exe)
            if not ok:
                failed.add(exe.name)
            for key, us in times.items():
                ours.setdefault(key, []).append(us)
        for key in ours:
            if key not in peers:
                peers[key] = torch_peer(*key)
            fn, _ = peers[key]
            if fn is not None:
                theirs.setdefault(key, []).append(time_torch(fn))
    print(f"{'kernel':<20} {'shape':<60} {'ours us':>9} {'torch us':>9} {'torch/ours':>10}  note")
    for key, ts in ours.items():
        o = statistics.median(ts)
        t = statistics.median(theirs[key]) if key in theirs else None
        note = peers[key][1]
        ratio = f"{t / o:.2f}x" if t else "-"
        print(f"{key[0]:<20} {key[1]:<60} {o:>9.2f} {t if t else float('nan'):>9.2f} {ratio:>10}  {note}")
    if failed:
        print(f"checks FAILED on the GPU: {', '.join(sorted(failed))}")
        return 1
    print("every driver's checks passed on the GPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
