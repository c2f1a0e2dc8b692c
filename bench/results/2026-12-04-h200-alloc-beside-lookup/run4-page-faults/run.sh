# Run 4: page faults in the first a + b, and its time with the code pages of libxp / the driver filled first
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled; echo "tree: 0ccc886"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/b -j16 --target xp_bench_first_call > $T/build.log 2>&1 || { tail -30 $T/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
B=$T/b/bench/xp_bench_first_call
XP_CACHE_DIR=$T/c $B plain 134217728 > $OUT/warm.txt 2>&1; XP_CACHE_DIR=$T/c $B device-inputs 134217728 >> $OUT/warm.txt 2>&1
for i in $(seq 11); do for pf in none xp cuda all; do echo "== plain $pf $i $(XP_CACHE_DIR=$T/c $B plain 134217728 $pf 2>&1)"; done; done > $OUT/prefault.txt
for i in $(seq 7); do for pf in none all; do echo "== device-inputs $pf $i $(XP_CACHE_DIR=$T/c $B device-inputs 134217728 $pf 2>&1)"; done; done >> $OUT/prefault.txt
python3 - $OUT/prefault.txt <<'PY' | tee $OUT/prefault_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r"== ([\w-]+) (\w+) \d+ .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms.*a \+ b checked\); first a\+b: (\d+) minor, (\d+) major faults, (\d+) voluntary, (\d+) involuntary switches; prefault \w+ (\d+) KiB in ([0-9.]+) ms", l)
    if not m: continue
    k = (m.group(1), m.group(2)); g = d[k]
    g["first_us"].append(float(m.group(3)) * 1000); g["then_us"].append(float(m.group(4)) * 1000)
    for j, n in enumerate(["minor", "major", "vol", "invol"]): g[n].append(int(m.group(5 + j)))
    g["pf_KiB"].append(int(m.group(9))); g["pf_ms"].append(float(m.group(10)))
for k in sorted(d):
    g = d[k]; f = g["first_us"]
    print(f"{k[0]:14s} {k[1]:5s} n={len(f)} first {st.median(f):.0f} us ({min(f):.0f}..{max(f):.0f}) under 1 ms {sum(x < 1000 for x in f)}; then a*b {st.median(g['then_us']):.0f} us; faults minor {st.median(g['minor'])} major {st.median(g['major'])}; switches {st.median(g['vol'])}/{st.median(g['invol'])}; prefault {st.median(g['pf_KiB'])} KiB in {st.median(g['pf_ms']):.2f} ms")
PY
echo "t $((SECONDS-t0)) s"
