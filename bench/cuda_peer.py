"""PyTorch's figures for bench/cuda.cu's measures, on the same GPU.

Run beside the device benchmark (scripts/bench.sh cuda runs it when python3
imports torch with CUDA); each line names the bench/cuda line it answers.
Times are medians of CUDA events around each repetition after two warm-ups,
as bench/cuda.cu takes them.
"""
import sys

try:
    import torch
except ImportError:
    print("PyTorch peer: python3 has no torch; no peer figures")
    sys.exit(0)
if not torch.cuda.is_available():
    print("PyTorch peer: torch %s sees no CUDA device; no peer figures" % torch.__version__)
    sys.exit(0)


def median_ms(reps, f):
    f()
    f()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def memory_bound(n):
    a = torch.rand(n, device="cuda")
    b = torch.rand(n, device="cuda")
    out = torch.empty(n, device="cuda")
    m = a.view(4096, n // 4096)
    cases = [
        ("out.copy_(a * 2 + b)", 3, lambda: out.copy_(a * 2 + b)),
        ("out.copy_(sin(a) * exp(-b) + a * b)", 3, lambda: out.copy_(torch.sin(a) * torch.exp(-b) + a * b)),
        ("sum(a)", 1, lambda: a.sum()),
        ("sum(a * b)", 2, lambda: (a * b).sum()),
        ("sum(m, 1), m 4096 rows", 1, lambda: m.sum(1)),
        ("sum(m, 0), m 4096 rows", 1, lambda: m.sum(0)),
    ]
    print("PyTorch %s, memory-bound, %d floats:" % (torch.__version__, n))
    for name, arrays, f in cases:
        ms = median_ms(20, f)
        print("  %-44s %9.3f ms %8.1f GB/s" % (name, ms, arrays * 4.0 * n / (ms * 1e-3) / 1e9))


def training_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(64, 784, device="cuda")
    y = (torch.arange(64, device="cuda") * 7) % 10

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    print("PyTorch training: MLP 784-256-10, batch 64, SGD momentum: %.3f ms per step" % median_ms(50, step))


memory_bound(1 << 26)
training_step()
