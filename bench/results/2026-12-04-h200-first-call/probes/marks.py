import sys, re
for f in sys.argv[1:]:
    runs = open(f).read().split("== run ")[1:]
    for r in runs:
        m = re.search(r"mark (\d+) (\d+)", r); t2, t3 = int(m.group(1)), int(m.group(2))
        ms = [(l.split()[1:-1], int(l.split()[-1])) for l in r.splitlines() if l.startswith("xpmark")]
        ms = [(" ".join(n), t) for n, t in ms if t2 <= t <= t3]
        prev = t2; out = []
        for n, t in ms:
            out.append(f"{n}:{(t-prev)/1e3:.1f}"); prev = t
        out.append(f"end:{(t3-prev)/1e3:.1f}")
        print(f"{(t3-t2)/1e3:7.1f} us | " + "  ".join(out))
