# medians of the first a+b's intervals per variant (the run name's letters before the number)
import sys, re, statistics as st, collections
runs = open(sys.argv[1]).read().split("== run ")[1:]
agg = collections.defaultdict(lambda: collections.defaultdict(list)); tot = collections.defaultdict(list)
for r in runs:
    name = re.match(r"([A-Za-z_+-]+)\d+", r).group(1)
    m = re.search(r"^mark (\d+) (\d+)", r, re.M)
    if not m: print("no mark in", r[:20]); continue
    t2, t3 = int(m.group(1)), int(m.group(2))
    ms = [(" ".join(l.split()[1:-1]), int(l.split()[-1])) for l in r.splitlines() if l.startswith("xpmark")]
    ms = [(n, t) for n, t in ms if t2 <= t <= t3] + [("end", t3)]
    prev = t2
    for n, t in ms: agg[name][n].append((t - prev) / 1e3); prev = t
    tot[name].append((t3 - t2) / 1e3)
for k in agg:
    v = tot[k]
    print(f"{k:10s} n={len(v):2d} median {st.median(v):7.1f} us ({min(v):.0f}..{max(v):.0f}) | " + "  ".join(f"{n}:{st.median(x):.1f}" for n, x in agg[k].items()))
