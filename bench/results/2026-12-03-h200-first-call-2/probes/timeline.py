import sys, re
out, tr = sys.argv[1], sys.argv[2]
m = re.search(r"mark (\d+) (\d+)", open(out).read()); t2, t3 = int(m.group(1)), int(m.group(2))
rows = [l.split() for l in open(tr)]
rows = [(n, int(a), int(b)) for n, a, b in rows if int(a) >= t2 and int(b) <= t3]
prev = t2; drv = 0
for n, a, b in rows:
    print(f"  +{(a-t2)/1e3:8.1f} us  gap {(a-prev)/1e3:7.1f}  {n:28s} {(b-a)/1e3:8.1f} us")
    drv += b - a; prev = b
print(f"  total {(t3-t2)/1e3:.1f} us: in driver {drv/1e3:.1f} us, outside {(t3-t2-drv)/1e3:.1f} us, tail gap {(t3-prev)/1e3:.1f}")
