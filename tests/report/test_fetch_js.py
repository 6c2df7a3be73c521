#!/usr/bin/env python3
"""report/fetch_js.py against a registry of its own (file://, no network): the pinned tarball's
bundle is written; a tarball whose sha512 is not the lock's, one without the bundle, a package
the lock does not pin and a registry that does not answer are refused, naming the package, and
write nothing."""
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

SCRIPT = sys.argv[1]


def tarball(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, content in members.items():
            info = tarfile.TarInfo(path)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def integrity(data):
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def run(tmp, lock, names, registry):
    lock_path = os.path.join(tmp, "package-lock.json")
    with open(lock_path, "w") as f:
        json.dump({"lockfileVersion": 3, "packages": lock}, f)
    out = os.path.join(tmp, "out")
    env = dict(os.environ, npm_config_registry=registry)
    r = subprocess.run([sys.executable, SCRIPT, lock_path, out, *names], env=env,
                       capture_output=True, text=True, timeout=120)
    return r, out


failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    reg = os.path.join(tmp, "registry")
    os.makedirs(os.path.join(reg, "vega", "-"))
    os.makedirs(os.path.join(reg, "vega-embed", "-"))
    good = tarball({"package/build/vega.min.js": b"!function(){/* vega */}();\n",
                    "package/package.json": b"{}"})
    with open(os.path.join(reg, "vega", "-", "vega-5.33.1.tgz"), "wb") as f:
        f.write(good)
    without = tarball({"package/package.json": b"{}"})
    with open(os.path.join(reg, "vega-embed", "-", "vega-embed-6.29.0.tgz"), "wb") as f:
        f.write(without)
    registry = "file://" + reg

    r, out = run(tmp, {"node_modules/vega": {"version": "5.33.1", "integrity": integrity(good)}},
                 ["vega"], registry)
    written = os.path.join(out, "vega.min.js")
    check(r.returncode == 0 and open(written, "rb").read() == b"!function(){/* vega */}();\n",
          f"the pinned bundle is written (exit {r.returncode}: {r.stderr.strip()})")
    os.remove(written)

    r, out = run(tmp, {"node_modules/vega": {"version": "5.33.1",
                                             "integrity": integrity(good + b"x")}},
                 ["vega"], registry)
    check(r.returncode == 1 and "vega 5.33.1" in r.stderr and "sha512" in r.stderr
          and not os.path.exists(written), f"a tarball not as pinned is refused: {r.stderr.strip()}")

    r, out = run(tmp, {"node_modules/vega-embed": {"version": "6.29.0",
                                                   "integrity": integrity(without)}},
                 ["vega-embed"], registry)
    check(r.returncode == 1 and "no package/build/vega-embed.min.js" in r.stderr,
          f"a tarball without the bundle is refused: {r.stderr.strip()}")

    r, out = run(tmp, {}, ["vega-lite"], registry)
    check(r.returncode == 1 and "vega-lite: no version" in r.stderr,
          f"a package the lock does not pin is refused: {r.stderr.strip()}")

    r, out = run(tmp, {"node_modules/vega": {"version": "5.33.1", "integrity": integrity(good)}},
                 ["vega"], "file://" + os.path.join(tmp, "nowhere"))
    check(r.returncode == 1 and "cannot fetch" in r.stderr and "vega-5.33.1.tgz" in r.stderr,
          f"a registry that does not answer is named: {r.stderr.strip()}")

sys.exit(1 if failures else 0)
