#!/usr/bin/env python3
"""The report's Vega JavaScript, without npm: fetch_js.py LOCK OUT_DIR NAME...

For each NAME, the version report/package-lock.json pins is fetched from the npm registry
(`$npm_config_registry`, as npm reads it, else https://registry.npmjs.org/), checked against the
lock's sha512 integrity, and its bundled build/NAME.min.js (which holds all it needs) written
to OUT_DIR/NAME.min.js. The lock is still npm's own file: `npm install --package-lock-only` in
report/ moves the versions.
"""
import base64
import hashlib
import json
import io
import os
import sys
import tarfile
import time
import urllib.request


def fail(message):
    print(f"fetch_js.py: {message}", file=sys.stderr)
    sys.exit(1)


def pinned(lock, name):
    entry = lock.get("packages", {}).get(f"node_modules/{name}")
    if not entry or "version" not in entry or not str(entry.get("integrity", "")).startswith("sha512-"):
        fail(f"{name}: no version with a sha512 integrity in the lock")
    return entry["version"], entry["integrity"][len("sha512-"):]


def fetch(url):
    last = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=60) as reply:
                return reply.read()
        except OSError as e:  # URLError, timeouts, resets: the registry may blink
            last = e
            time.sleep(attempt + 1)
    fail(f"cannot fetch {url}: {last}")


def main():
    if len(sys.argv) < 4:
        fail("usage: fetch_js.py LOCK OUT_DIR NAME...")


    with open(sys.argv[1], encoding="utf-8") as f:
        lock = json.load(f)
    out_dir = sys.argv[2]
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[3:]:
        version, integrity = pinned(lock, name)
        url = f"{registry.rstrip('/')}/{name}/-/{name}-{version}.tgz"
        data = fetch(url)
        if base64.b64encode(hashlib.sha512(data).digest()).decode() != integrity:
            fail(f"{name} {version} from {url}: its sha512 is not the one package-lock.json pins")
        member = f"package/build/{name}.min.js"
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            try:
                script = tar.extractfile(member)
            except KeyError:
                script = None
            if script is None:
                fail(f"{name} {version}: no {member} in its tarball")
            content = script.read()
        out = os.path.join(out_dir, f"{name}.min.js")
        with open(out + ".tmp", "wb") as f:
            f.write(content)
        os.replace(out + ".tmp", out)
        print(f"fetch_js.py: {name} {version} ({len(data)} bytes, sha512 as pinned) -> {out}")


if __name__ == "__main__":
    main()
