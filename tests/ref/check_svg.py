#!/usr/bin/env python3
"""Reads an SVG file written by `xp bench sweep` and prints what a reader of the plot relies on,
as JSON: the root element, the axis labels, each panel's series (data-row of every polyline with
its point count), the legend entries and the threshold marks. Exits 2 when the file is not XML."""
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except ET.ParseError as e:
        print(json.dumps({"error": str(e)}))
        return 2
    out = {"root": root.tag, "width": root.get("width"), "height": root.get("height"),
           "title": (root.findtext(NS + "title") or ""), "axis_labels": [], "panels": {}, "legend": [],
           "thresholds": []}
    for t in root.iter(NS + "text"):
        if t.get("class") == "axis-label":
            out["axis_labels"].append("".join(t.itertext()))
        if t.get("class") == "legend-entry":
            out["legend"].append({"row": t.get("data-row"), "text": "".join(t.itertext())})
    for g in root.iter(NS + "g"):
        if g.get("class") != "panel":
            continue
        series = []
        for p in g.iter(NS + "polyline"):
            if p.get("class") == "series":
                pts = [tuple(float(v) for v in xy.split(",")) for xy in (p.get("points") or "").split()]
                series.append({"row": p.get("data-row"), "points": len(pts),
                               "x_increasing": all(pts[i][0] < pts[i + 1][0] for i in range(len(pts) - 1))})
        out["panels"][g.get("data-panel")] = series
        out["thresholds"] += [c.get("data-row") for c in g.iter(NS + "circle") if c.get("class") == "threshold"]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
