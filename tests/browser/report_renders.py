#!/usr/bin/env python3
"""The HTML report in a real browser: Debian's headless Chromium loads it from a file:// URL
and every chart must render with data marks, with no console message and no page error, and
the page must fetch nothing.

    report_renders.py NP_EXPLAIN RUN_DIR [--screenshot PNG] [--keep DIR]

RUN_DIR is copied to a temporary directory first (the report is written there, never into the
source tree). Exit 0 pass, 1 fail, 77 skipped (no chromium: ctest shows SKIPPED).

Chromium runs with a fresh profile and a host resolver that resolves nothing, so neither the
page nor Chromium's own update or account pings can reach the network; the net log then shows
whether the page asked for anything but its own file.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
    "--disable-breakpad", "--disable-domain-reliability", "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
# Hosts Chromium itself asks for (component updater, accounts) although told not to: not the
# page's requests, and the resolver rule keeps them on this machine.
CHROMIUM_OWN_HOSTS = ("google.com", "googleapis.com", "gstatic.com", "googleusercontent.com")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, profile, extra, url, timeout_s=120):
    """Runs Chromium to completion (or kills that one process group on timeout)."""
    cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        import os
        import signal
        os.killpg(proc.pid, signal.SIGKILL)  # the group of the Chromium this test started
        proc.communicate()
        raise SystemExit(f"FAIL: chromium did not finish within {timeout_s} s")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("np_explain")
    ap.add_argument("run_dir")
    ap.add_argument("--screenshot", help="also save a full-page screenshot here")
    ap.add_argument("--keep", help="keep the report, DOM and logs in this directory")
    args = ap.parse_args()

    chromium = find_chromium()
    if not chromium:
        print("SKIP: no chromium (apt-get install chromium; scripts/setup.sh does)")
        return 77

    work = Path(tempfile.mkdtemp(prefix="np-report-browser-"))
    try:
        run_dir = work / "run"
        shutil.copytree(args.run_dir, run_dir)
        report = work / "report.html"
        subprocess.run([args.np_explain, "report", str(run_dir), "--out", str(report)],
                       check=True)
        page = report.read_text()
        chart_ids = re.findall(r'<div class="vega" id="([^"]+)" data-rows="(\d+)"', page)
        failures = []
        if not chart_ids:
            failures.append("the report has no charts")

        started = time.monotonic()
        rc, dom, log = run_chromium(
            chromium, work / "profile",
            ["--enable-logging=stderr", "--v=0", f"--log-net-log={work / 'netlog.json'}",
             "--virtual-time-budget=20000", "--dump-dom"],
            report.as_uri())
        elapsed = time.monotonic() - started
        if rc != 0:
            failures.append(f"chromium exited {rc}")

        body = re.search(r"<body([^>]*)>", dom)
        body_attrs = body.group(1) if body else ""
        rendered = re.search(r'data-charts-rendered="(\d+)"', body_attrs)
        if not rendered:
            failures.append("the page never marked all charts rendered (data-charts-rendered)")
        elif int(rendered.group(1)) != len(chart_ids):
            failures.append(f"{rendered.group(1)} of {len(chart_ids)} charts rendered")
        for attr in ("data-chart-error", "data-console-errors"):
            m = re.search(attr + r'="([^"]*)"', body_attrs)
            if m:
                failures.append(f"{attr}: {m.group(1)}")
        for chart, rows in chart_ids:
            div = re.search(r'<div class="vega[^"]*" id="' + re.escape(chart) + r'"[^>]*>', dom)
            marks = re.search(r'data-marks="(\d+)"', div.group(0)) if div else None
            svg = div and dom.find("<svg", div.end()) >= 0
            if not div or not marks or not svg:
                failures.append(f"chart {chart}: not rendered as SVG")
            elif int(rows) == 0 or int(marks.group(1)) == 0:
                failures.append(f"chart {chart}: {rows} data rows, {marks.group(1)} marks drawn")
            else:
                print(f"chart {chart}: {rows} data rows, {marks.group(1)} marks drawn")

        # Any console message (errors, Vega's warnings) means something is off in a spec.
        console = [l for l in log.splitlines() if ":CONSOLE" in l]
        failures += [f"console: {l}" for l in console]

        requested = set()
        netlog = work / "netlog.json"
        if netlog.exists():
            requested = set(re.findall(r'"url":"([^"]*)"', netlog.read_text(errors="replace")))
        page_requests = sorted(
            u for u in requested
            if urlparse(u).scheme not in ("file", "data", "blob", "about", "chrome")
            and not (urlparse(u).hostname or "").endswith(CHROMIUM_OWN_HOSTS))
        failures += [f"the page fetched {u}" for u in page_requests]

        if args.screenshot:
            run_chromium(chromium, work / "profile-shot",
                         ["--window-size=1280,1800", "--virtual-time-budget=20000",
                          f"--screenshot={Path(args.screenshot).resolve()}"],
                         report.as_uri())
        print(f"report {len(page) / 1024:.0f} KB, {len(chart_ids)} charts; chromium load + "
              f"render + DOM dump {elapsed:.2f} s")
        if args.keep:
            keep = Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(report, keep / "report.html")
            (keep / "dom.html").write_text(dom)
            (keep / "chromium.log").write_text(log)
        if failures:
            for f in failures:
                print("FAIL:", f)
            return 1
        print("PASS")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
