"""Joins the sweep outputs of xp (`xp_bench_gpu_reductions --sweep`), CuPy and PyTorch
(`bench/python/gpu_reductions.py --sweep CASES [--torch]`) by case id and prints a markdown table:
case, xp ms, CuPy ms, PyTorch ms and xp's ratio = the best other library's time / xp's time (> 1:
xp is faster), sorted by the ratio, worst first; then the worst ratio, the worst at each size, the
count under 0.95, every failed check, every case missing from an output, and what each library
lacks. Only results whose check passed are compared. Exit status 1 when a check failed or a case is
missing, else 0.

    sweep_ratio.py --xp XP.txt [--cupy CUPY.txt] [--torch TORCH.txt] [--cases CASES.txt]

With --cases (the list that all three ran) a case of the list that an output lacks is reported
missing, and the table keeps the list's cases only; without it, the cases are those of any output."""
import argparse
import sys
from collections import namedtuple

Result = namedtuple("Result", "ms lo hi check")  # ms, lo, hi: floats or None; check: "ok", "BAD ...", "unsupported ..."
LIBS = (("xp", "xp"), ("cupy", "CuPy"), ("torch", "PyTorch"))
GOAL = 0.95


def parse_output(lines, where="output"):
    """{case id: Result} from the "case <id> <median> <min> <max> <check...>" lines of one output;
    other lines are ignored. A ValueError names a malformed or repeated line."""
    results = {}
    for number, line in enumerate(lines, 1):
        if not line.startswith("case "):
            continue
        words = line.split()
        if len(words) < 6:
            raise ValueError(f"{where}:{number}: expected 'case <id> <median> <min> <max> <check>', got {line.strip()!r}")
        case_id = words[1]
        try:
            ms, lo, hi = (None if w in ("-", "nan") else float(w) for w in words[2:5])
        except ValueError:
            raise ValueError(f"{where}:{number}: times are not numbers: {line.strip()!r}") from None
        check = " ".join(words[5:])
        if not (check == "ok" or check.startswith("BAD") or check.startswith("unsupported")):
            raise ValueError(f"{where}:{number}: check is not ok, BAD or unsupported: {line.strip()!r}")
        if check == "ok" and ms is None:
            raise ValueError(f"{where}:{number}: a passed check without a time: {line.strip()!r}")
        if case_id in results:
            raise ValueError(f"{where}:{number}: case {case_id} appears twice")
        results[case_id] = Result(ms, lo, hi, check)
    return results


def parse_case_ids(lines):
    return [line.split()[0] for line in lines if line.split() and not line.split()[0].startswith("#")]


def ratio_of(xp, others):
    """(ratio, the best other library's key) or (None, None): the fastest passed other time over
    xp's passed time."""
    if xp is None or xp.check != "ok" or not xp.ms:
        return None, None
    passed = [(r.ms, key) for key, r in others.items() if r is not None and r.check == "ok"]
    if not passed:
        return None, None
    best_ms, best_key = min(passed)
    return best_ms / xp.ms, best_key


def cell(result):
    if result is None:
        return "missing"
    if result.check == "ok":
        return f"{result.ms:.4f}"
    if result.check.startswith("BAD"):
        return f"BAD ({result.ms:.4f})" if result.ms is not None else "BAD"
    return "unsupported"


def report(outputs, case_ids=None, out=sys.stdout):
    """outputs: {"xp"|"cupy"|"torch": {id: Result}} (a library left out was not run). Prints the
    report; returns the exit status."""
    libs = [(key, title) for key, title in LIBS if key in outputs]
    if case_ids is None:
        case_ids, seen = [], set()
        for key, _ in libs:
            for case_id in outputs[key]:
                if case_id not in seen:
                    seen.add(case_id)
                    case_ids.append(case_id)
    rows = []
    for case_id in case_ids:
        got = {key: outputs[key].get(case_id) for key, _ in libs}
        ratio, best = ratio_of(got.get("xp"), {k: v for k, v in got.items() if k != "xp"})
        rows.append((case_id, got, ratio, best))
    order = {case_id: i for i, case_id in enumerate(case_ids)}
    rows.sort(key=lambda r: (r[2] is None, r[2] if r[2] is not None else 0, order[r[0]]))

    titles = dict(LIBS)
    print("| case | " + " | ".join(f"{title} ms" for _, title in libs) + " | xp ratio | best other |", file=out)
    print("|---|" + "---:|" * len(libs) + "---:|---|", file=out)
    for case_id, got, ratio, best in rows:
        cells = " | ".join(cell(got[key]) for key, _ in libs)
        print(f"| {case_id} | {cells} | {'-' if ratio is None else f'{ratio:.3f}'} | "
              f"{titles[best] if best else '-'} |", file=out)
    print(file=out)

    rated = [r for r in rows if r[2] is not None]
    if rated:
        case_id, got, ratio, best = rated[0]
        print(f"worst ratio: {ratio:.3f} ({case_id}: xp {got['xp'].ms:.4f} ms, {titles[best]} "
              f"{got[best].ms:.4f} ms)", file=out)
        by_size = {}
        for r in rated:  # rows are sorted: the first of each size is its worst
            by_size.setdefault(r[0].rsplit(".", 1)[-1], r)
        for size, (case_id, _, ratio, _) in by_size.items():
            print(f"worst at {size}: {ratio:.3f} ({case_id})", file=out)
    else:
        print("worst ratio: none (no case has a passed xp result and a passed other result)", file=out)
    under = [r for r in rated if r[2] < GOAL]
    print(f"under {GOAL}: {len(under)} of {len(rated)} cases with a ratio "
          f"({len(rows) - len(rated)} without one: see below)", file=out)

    failed = [(titles[key], case_id, got[key].check) for case_id, got, _, _ in sorted(rows, key=lambda r: order[r[0]])
              for key, _ in libs if got[key] is not None and got[key].check.startswith("BAD")]
    print(f"\nfailed checks: {len(failed)}", file=out)
    for title, case_id, check in failed:
        print(f"- {title} {case_id}: {check}", file=out)

    missing = [(title, case_id) for case_id in case_ids for key, title in libs if case_id not in outputs[key]]
    listed = set(case_ids)
    unknown = [(title, case_id) for key, title in libs for case_id in outputs[key] if case_id not in listed]
    print(f"\nmissing cases: {len(missing)}", file=out)
    for title, case_id in missing:
        print(f"- {title} has no result for {case_id}", file=out)
    if unknown:
        print(f"\ncases not in the list: {len(unknown)}", file=out)
        for title, case_id in unknown:
            print(f"- {title} ran {case_id}", file=out)

    lacking = {}  # (library, op, dtype): (count, reason)
    for case_id in case_ids:
        for key, title in libs:
            r = outputs[key].get(case_id)
            if r is not None and r.check.startswith("unsupported"):
                parts = case_id.split(".")
                group = (title, ".".join(parts[:2]) if len(parts) >= 4 else case_id)
                count, _ = lacking.get(group, (0, ""))
                lacking[group] = (count + 1, r.check[len("unsupported"):].strip())
    print(f"\nunsupported (skipped): {sum(c for c, _ in lacking.values())} results", file=out)
    for (title, group), (count, reason) in lacking.items():
        print(f"- {title} {group} ({count} cases): {reason}", file=out)
    no_ratio = [r[0] for r in rows if r[2] is None]
    if no_ratio:
        print(f"\nno ratio (xp or every other library without a passed result): {len(no_ratio)}", file=out)
        for case_id in no_ratio:
            print(f"- {case_id}", file=out)
    return 1 if failed or missing or unknown else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xp", required=True, help="xp_bench_gpu_reductions --sweep's output")
    parser.add_argument("--cupy", help="gpu_reductions.py --sweep's output")
    parser.add_argument("--torch", help="gpu_reductions.py --sweep --torch's output")
    parser.add_argument("--cases", help="the case list that they ran (xp_bench_gpu_reductions --sweep-cases)")
    args = parser.parse_args(argv)
    outputs = {}
    try:
        for key, path in (("xp", args.xp), ("cupy", args.cupy), ("torch", args.torch)):
            if path:
                with open(path) as f:
                    outputs[key] = parse_output(f, path)
        case_ids = None
        if args.cases:
            with open(args.cases) as f:
                case_ids = parse_case_ids(f)
    except (OSError, ValueError) as e:
        print(f"sweep_ratio.py: {e}", file=sys.stderr)
        return 2
    return report(outputs, case_ids)


if __name__ == "__main__":
    sys.exit(main())
