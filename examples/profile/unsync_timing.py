"""TPL201: a matmul timed with the wall clock and no torch.cuda.synchronize().

On a GPU the clock stops when the kernel is queued, not when it is done.
`perf-lint profile unsync_timing.py --rule TPL201`.
"""

import time

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(2048, 2048, device=device)

timings = []
for trial in range(50):
    start = time.perf_counter()
    y = torch.mm(x, x)
    elapsed = time.perf_counter() - start
    timings.append(elapsed)
print(f"matmul: {1000 * sum(timings) / len(timings):.3f} ms")
