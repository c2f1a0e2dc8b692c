import torch
g = torch.Generator(device="cuda").manual_seed(7)
def measure(f):
    for _ in range(3):
        f()
    t = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            f()
        b.record()
        b.synchronize()
        t.append(a.elapsed_time(b) / 10)
    t.sort()
    return t[2], t[0], t[4]
for shape, dim in (((1 << 29,), None), ((32768, 16384), 0)):
    x = (torch.rand(shape, device="cuda", generator=g) * 2 - 1).to(torch.float16)
    m, lo, hi = measure(lambda: torch.sum(x) if dim is None else torch.sum(x, dim=dim))
    print(f"torch sum float16 {'all' if dim is None else dim} {'x'.join(map(str, shape))}: {m:.4f} ms ({lo:.4f}..{hi:.4f})", flush=True)
