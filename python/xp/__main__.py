"""``python -m xp doctor [--json]``: the report of ``xp doctor``, from the package itself."""

import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m xp")
    sub = parser.add_subparsers(dest="command", required=True)
    doc = sub.add_parser("doctor", help="what xp found (driver, NVRTC, GPUs) and how to fix what is wrong")
    doc.add_argument("--json", action="store_true", help="the JSON document of `xp doctor --json`")
    args = parser.parse_args(argv)

    import xp

    report = xp.doctor()
    if args.json:
        print(json.dumps(report, indent=2))
        return report["exit_code"]
    cuda = report["cuda"]
    print(f"xp {report['xp_version']} (Python package, {xp.__file__})")
    verdict = report["verdict"]
    if verdict["device"] is None:
        print(f"  error: {verdict['error']}")
    elif verdict["uses_gpu"]:
        print(f"  GPU in use: {verdict['device']} (driver CUDA {cuda['driver_version']}, NVRTC {cuda['nvrtc_version']})")
    else:
        print(f"  CPU: CUDA {cuda['reason']}" + (f": {cuda['detail']}" if cuda["detail"] else ""))
    for g in report["gpus"]:
        print(f"  {g['device']}  {g['name']}  {g['arch']}")
    cpu = report["cpu"]
    print(f"  CPU: {cpu['model'] or 'model unknown'}, {cpu['threads']} threads, vector level {cpu['math_isa']}")
    for p in report["problems"]:
        print(f"  [{p['severity']}] {p['message']}\n      fix: {p['fix']}")
    return report["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
