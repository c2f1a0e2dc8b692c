# PyTorch's reductions over axis 0 of 16384 x 16384, timed as bench/nvcc/timing.cuh times (rounds of
# 20 calls between events, the median of 9); run twice in run 1.
import torch
def med(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    t = []
    for _ in range(9):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(20): f()
        e1.record(); e1.synchronize()
        t.append(e0.elapsed_time(e1) / 20)
    return sorted(t)[4]
n = 16384
for name, dt in [("float32", torch.float32), ("float16", torch.float16), ("int8", torch.int8)]:
    if dt == torch.int8:
        x = torch.randint(-128, 127, (n, n), dtype=dt, device="cuda")
    else:
        x = torch.rand((n, n), dtype=dt, device="cuda")
    for op, f in [("sum", lambda: torch.sum(x, 0)), ("max", lambda: torch.amax(x, 0))]:
        if dt == torch.int8 and op == "sum": continue
        ms = med(f)
        print(f"torch {op} {name} axis 0: {ms:.4f} ms  {n*n*x.element_size()/ms/1e6:.0f} GB/s")
    del x
