#!/usr/bin/env python3
"""Forecast accuracy of capops against statsforecast, on the same windows.

    python3 benches/forecast_compare.py DATA.csv [--value "running_gpus + pending_gpus"]
                                        [--horizon 24] [--windows 7] [--cut HOURS] [--capops PATH]

Rolling-origin evaluation: the last `windows` x `horizon` hours of each series
are held out, in `windows` windows of `horizon` hours (step = horizon), each
trained on everything before its cutoff. `--cut HOURS` first drops the last
HOURS of every series: the development protocol, whose windows end where the
held-out ones begin (say `--cut 168 --windows 14`). capops runs
`capops forecast backtest`; statsforecast 2.1.1 runs Naive, SeasonalNaive(24),
SeasonalNaive(168), AutoETS(24) and MSTL([24, 168]) with 80% intervals
(P10/P90) through `cross_validation`. Gaps (empty cells) are missing values:
capops handles them itself; statsforecast's models need a complete series, so
its training data has gaps filled by linear interpolation (said in the output).

Every metric is computed here, by the same code, for both tools, per series
and window and then averaged over windows:
  MASE     mean |y - p50| / mean |y_t - y_{t-24}| over that window's training data
  sMAPE    mean |y - p50| / (|y| + |p50|), 0 when both are 0 (range [0, 1])
  coverage share of actuals within [P10, P90]
  pinball  mean pinball loss at 0.1, 0.5, 0.9, scaled like MASE

statsforecast is used from the running Python when it is importable (say,
a virtual environment outside the repository); otherwise it is installed into
target/forecast-venv on first use (needs PyPI) and the script re-runs itself
there. Data never goes into the repository: pass the CSV's path.
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "forecast-venv")
PEER = "statsforecast==2.1.1"


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    try:
        import statsforecast  # noqa: F401 - already installed where this runs
        return
    except ImportError:
        pass
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "--quiet", PEER], check=True)
    os.execv(py, [py, *sys.argv])


def value_fn(expr):
    """Compiles `a + b - 2 * c` over column names into a function of a row (None for gaps)."""
    import re
    tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[-+*/()]", expr)
    code = []
    names = []
    for t in tokens:
        if re.match(r"[A-Za-z_]", t):
            names.append(t)
            code.append(f"v[{t!r}]")
        else:
            code.append(t)
    src = " ".join(code)

    def f(row):
        v = {}
        for n in names:
            cell = row.get(n, "")
            if cell is None or cell.strip() == "":
                return None
            v[n] = float(cell)
        return eval(src, {"__builtins__": {}}, {"v": v})  # noqa: S307 - our own expression grammar
    return f


def load(path, expr):
    f = value_fn(expr)
    series = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            series.setdefault(row["series"], []).append((row["timestamp"], f(row)))
    for k in series:
        series[k].sort()
    return series


def metrics(train, actual, p10, p50, p90):
    scale_terms = [abs(train[i] - train[i - 24]) for i in range(24, len(train))
                   if train[i] is not None and train[i - 24] is not None]
    scale = sum(scale_terms) / len(scale_terms) if scale_terms else float("nan")
    pairs = [(y, a, b, c) for y, a, b, c in zip(actual, p10, p50, p90) if y is not None]
    n = len(pairs)
    mae = sum(abs(y - m) for y, _, m, _ in pairs) / n
    smape = sum(0.0 if (abs(y) + abs(m)) == 0 else abs(y - m) / (abs(y) + abs(m)) for y, _, m, _ in pairs) / n
    cov = sum(1 for y, lo, _, hi in pairs if lo <= y <= hi) / n

    def pin(q, pred):
        return sum(max(q * (y - p), (q - 1) * (y - p)) for y, p in zip([p[0] for p in pairs], pred)) / n
    pinball = (pin(0.1, [p[1] for p in pairs]) + pin(0.5, [p[2] for p in pairs]) + pin(0.9, [p[3] for p in pairs])) / 3
    return {"mase": mae / scale if scale > 0 else float("nan"), "smape": smape, "coverage": cov,
            "pinball": pinball / scale if scale > 0 else float("nan")}


def windows_of(values, horizon, windows):
    n = len(values)
    return [n - horizon * k for k in range(windows, 0, -1)]  # index of the first held-out hour


def interpolate(vals):
    out = list(vals)
    idx = [i for i, v in enumerate(out) if v is not None]
    if not idx:
        return [0.0] * len(out)
    for i in range(len(out)):
        if out[i] is None:
            left = max((j for j in idx if j < i), default=None)
            right = min((j for j in idx if j > i), default=None)
            if left is None:
                out[i] = out[right]
            elif right is None:
                out[i] = out[left]
            else:
                out[i] = out[left] + (out[right] - out[left]) * (i - left) / (right - left)
    return out


def run_statsforecast(series, horizon, windows):
    import pandas as pd
    from statsforecast import StatsForecast
    from statsforecast.models import MSTL, AutoETS, Naive, SeasonalNaive
    frames = []
    for sid, rows in series.items():
        ys = interpolate([v for _, v in rows])
        frames.append(pd.DataFrame({"unique_id": sid, "ds": pd.to_datetime([t for t, _ in rows]).tz_localize(None), "y": ys}))
    df = pd.concat(frames)
    models = [Naive(), SeasonalNaive(24, alias="SeasonalNaive24"), SeasonalNaive(168, alias="SeasonalNaive168"),
              AutoETS(season_length=24, alias="AutoETS24"), MSTL(season_length=[24, 168], alias="MSTL")]
    sf = StatsForecast(models=models, freq="h", n_jobs=1)
    cv = sf.cross_validation(df=df, h=horizon, n_windows=windows, step_size=horizon, level=[80])
    out = {}
    for m in ["Naive", "SeasonalNaive24", "SeasonalNaive168", "AutoETS24", "MSTL"]:
        for sid in series:
            sub = cv[cv["unique_id"] == sid].sort_values(["cutoff", "ds"])
            for cutoff, g in sub.groupby("cutoff"):
                out.setdefault(m, {}).setdefault(sid, []).append(
                    (g[f"{m}-lo-80"].tolist(), g[m].tolist(), g[f"{m}-hi-80"].tolist()))
    return out


def run_capops(capops, path, expr, horizon, windows):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "forecasts.csv")
        subprocess.run([capops, "forecast", "backtest", "--csv", path, "--value", expr, "--horizon", str(horizon),
                        "--windows", str(windows), "--out", out], check=True, stdout=subprocess.DEVNULL)
        forecasts = {}
        with open(out, newline="") as fh:
            for row in csv.DictReader(fh):
                w = forecasts.setdefault(row["series"], {}).setdefault(row["cutoff"], ([], [], []))
                w[0].append(float(row["p10"]))
                w[1].append(float(row["p50"]))
                w[2].append(float(row["p90"]))
        result = {}
        for sid, by_cutoff in forecasts.items():
            result[sid] = [by_cutoff[c] for c in sorted(by_cutoff)]
            for lo, mid, hi in result[sid]:
                assert all(x >= 0 for x in lo), f"{sid}: negative P10"
                assert all(a <= b <= c for a, b, c in zip(lo, mid, hi)), f"{sid}: crossing quantiles"
        return result


def evaluate(series, forecasts, horizon, windows):
    table = {}
    for sid, rows in series.items():
        vals = [v for _, v in rows]
        per = []
        for w, start in enumerate(windows_of(vals, horizon, windows)):
            lo, mid, hi = forecasts[sid][w]
            per.append(metrics(vals[:start], vals[start:start + horizon], lo, mid, hi))
        table[sid] = {k: sum(p[k] for p in per) / len(per) for k in per[0]}
    return table


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ensure_venv()
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--value", default="running_gpus + pending_gpus")
    p.add_argument("--horizon", type=int, default=24)
    p.add_argument("--windows", type=int, default=7)
    p.add_argument("--cut", type=int, default=0, help="drop the last HOURS of every series first")
    p.add_argument("--capops", default=os.path.join(ROOT, "target", "release", "capops"))
    a = p.parse_args()
    series = load(a.csv, a.value)
    if a.cut > 0:
        series = {sid: rows[:-a.cut] for sid, rows in series.items() if len(rows) > a.cut}
    path, expr = a.csv, a.value
    if a.cut > 0:
        # capops reads the cut series from a file of its own.
        tmp = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
        w = csv.writer(tmp)
        w.writerow(["timestamp", "series", "value"])
        for sid, rows in series.items():
            for t, v in rows:
                w.writerow([t, sid, "" if v is None else repr(v)])
        tmp.close()
        path, expr = tmp.name, "value"
    print(f"data: {a.csv}; value: {a.value}; last {a.cut} h cut; {len(series)} series; {a.windows} windows of {a.horizon} h, step {a.horizon} h")
    print("statsforecast: gaps in the training data filled by linear interpolation (its models need a complete series)")
    sf = run_statsforecast(series, a.horizon, a.windows)
    ours = run_capops(a.capops, path, expr, a.horizon, a.windows)
    if path != a.csv:
        os.unlink(path)
    tables = {"capops": evaluate(series, ours, a.horizon, a.windows)}
    for m, f in sf.items():
        tables[m] = evaluate(series, f, a.horizon, a.windows)
    names = list(tables)
    for metric in ["mase", "smape", "coverage", "pinball"]:
        print(f"\n{metric.upper()} (per series, mean over windows)")
        print(f"{'series':<24}" + "".join(f"{n:>17}" for n in names))
        for sid in series:
            print(f"{sid:<24}" + "".join(f"{tables[n][sid][metric]:>17.3f}" for n in names))
    print("\ngeometric mean over series of MASE(capops) / MASE(model):")
    ratios = {}
    for n in names[1:]:
        ratios[n] = geomean([tables["capops"][s]["mase"] / tables[n][s]["mase"] for s in series])
        print(f"  vs {n:<18} {ratios[n]:.3f}")
    best = min(names[1:], key=lambda n: geomean([tables[n][s]["mase"] for s in series]))
    print(f"best single statsforecast model (lowest geometric-mean MASE): {best}; ratio {ratios[best]:.3f}"
          f" ({'at or below' if ratios[best] <= 1.0 else 'above'} it)")
    oracle = geomean([tables["capops"][s]["mase"] / min(tables[n][s]["mase"] for n in names[1:]) for s in series])
    print(f"vs an oracle picking the best statsforecast model per series: {oracle:.3f}")
    cov = sum(tables["capops"][s]["coverage"] for s in series) / len(series)
    print(f"capops [P10, P90] coverage, mean over series: {cov:.3f} (target 0.75 to 0.90)")


if __name__ == "__main__":
    main()
