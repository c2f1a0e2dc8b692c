import torch
g = torch.Generator(device="cuda").manual_seed(7)
for name, dt, n in (("float16", torch.float16, 1 << 29), ("bfloat16", torch.bfloat16, 1 << 29), ("float32", torch.float32, 1 << 28)):
    x = (torch.rand(n, device="cuda", generator=g) * 2 - 1).to(dt)
    for _ in range(3):
        torch.sum(x)
    t = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            torch.sum(x)
        b.record()
        b.synchronize()
        t.append(a.elapsed_time(b) / 10)
    t.sort()
    print(f"torch sum {name} all {n}: {t[2]:.4f} ms ({t[0]:.4f}..{t[4]:.4f})")
