"""What the notebook and the playbook share: a thin layer over np-explain's command line.

Every figure, check and comparison comes from np-explain (`params`, `attach`, `parity`,
`explain`, all JSON); this module only runs commands (np-explain on the console, the node steps
of `np-explain node-steps` over ssh) and loads the JSON np-explain wrote. It does no parsing
of tool output and no arithmetic of its own.

Environment (the same for every mode): NETWORK_PERFORMANCE_SSH_CONFIG (default: your own ssh
config), NETWORK_PERFORMANCE_PARAMS (default: the params file beside this module),
NETWORK_PERFORMANCE_RUN_DIR (default /tmp/network-performance-$USER/), NP_EXPLAIN (default:
np-explain on PATH), NP_PROBE (default: np-probe beside np-explain), OMF_NODES ("A,B": A is the
iperf3 server). Host keys are checked strictly.

As a command (what the playbook calls on the console):
    python3 network-performance_lib.py contract MODE NODE_A NODE_B
"""
import atexit
import getpass
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def np_explain():
    path = os.environ.get("NP_EXPLAIN") or shutil.which("np-explain")
    if not path:
        raise RuntimeError("np-explain not found: put it on PATH or set NP_EXPLAIN")
    return path


def np_probe():
    if os.environ.get("NP_PROBE"):
        return os.environ["NP_PROBE"]
    base = os.path.dirname(os.path.realpath(np_explain()))
    for candidate in (os.path.join(base, "np-probe"), os.path.join(base, "..", "probe", "np-probe")):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    raise RuntimeError("np-probe not found beside np-explain: set NP_PROBE")


def params_file():
    return os.environ.get("NETWORK_PERFORMANCE_PARAMS") or os.path.join(HERE, "network-performance_params.yml")


def run_dir():
    d = os.environ.get("NETWORK_PERFORMANCE_RUN_DIR") or f"/tmp/network-performance-{getpass.getuser()}"
    os.makedirs(d, exist_ok=True)
    return d


def nodes():
    """OMF_NODES as (server, client)."""
    names = [n.strip() for n in os.environ.get("OMF_NODES", "").split(",") if n.strip()]
    if len(names) != 2:
        raise RuntimeError("set OMF_NODES to two nodes, server first: OMF_NODES=node1-1,node1-2")
    return names[0], names[1]


def cli(*args, check=True):
    """np-explain ARGS…; its stdout (a failure raises with its stderr)."""
    p = subprocess.run([np_explain(), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"np-explain {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def params():
    """The params file as np-explain checks it (the same reader as `np-explain run`)."""
    p = cli("params", params_file())
    if p.stderr.strip():  # keys only `np-explain run` acts on: said, not ignored
        print(p.stderr.strip(), file=sys.stderr)
    return json.loads(p.stdout)


_CM_DIR = None
_NODE_STEPS = None


def _close_ssh():
    """Ends the SSH masters of this session (registered at exit)."""
    if _CM_DIR and os.path.isdir(_CM_DIR):
        for sock in os.listdir(_CM_DIR):
            subprocess.run(["ssh", "-o", f"ControlPath={_CM_DIR}/{sock}", "-O", "exit", "x"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(_CM_DIR, ignore_errors=True)


def _ssh(node, *remote, stdin=None, stdout=subprocess.PIPE):
    global _CM_DIR
    if _CM_DIR is None:
        # One SSH connection per node for all the steps (a master that ends 30 s after its
        # last use, or when this Python process exits).
        _CM_DIR = tempfile.mkdtemp(prefix="network-performance-ssh.")
        atexit.register(_close_ssh)
    cmd = ["ssh", "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ControlMaster=auto",
           "-o", f"ControlPath={_CM_DIR}/%C", "-o", "ControlPersist=30"]
    if os.environ.get("NETWORK_PERFORMANCE_SSH_CONFIG"):
        cmd[1:1] = ["-F", os.environ["NETWORK_PERFORMANCE_SSH_CONFIG"]]
    return subprocess.run(cmd + [f"root@{node}", *remote], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, text=stdout is subprocess.PIPE)


def node_steps():
    """The node steps every mode shares (`np-explain node-steps`), kept in a file for ssh's stdin."""
    global _NODE_STEPS
    if _NODE_STEPS is None:
        _NODE_STEPS = tempfile.TemporaryFile()
        _NODE_STEPS.write(subprocess.run([np_explain(), "node-steps"], capture_output=True,
                                         check=True).stdout)
    _NODE_STEPS.seek(0)
    return _NODE_STEPS


def step(node, *args):
    """One node step on a node; prints what it said."""
    p = _ssh(node, "sh", "-s", "--", args[0], node, *map(str, args[1:]), stdin=node_steps())
    if p.stdout:
        print(p.stdout, end="")
    if p.returncode != 0:
        raise RuntimeError(f"{node}: {args[0]}: {p.stderr.strip()}")


def test(node, iface, peer, seconds, command, out_file):
    """A measurement command on a node (the test step), its output into out_file (raw, for
    np-explain). The step records its PID, so a teardown after a killed run stops exactly that
    test; for a test of `seconds` (above 0) it pings `peer` over `iface` beside it, as
    `np-explain run` does (the probes stamp the echoes: the round trip under load, by stage)."""
    with open(out_file, "wb") as f:
        p = _ssh(node, "sh", "-s", "--", "test", node, iface, peer, str(seconds), command,
                 stdin=node_steps(), stdout=f)
    print(f"{node}$ {command}  -> {out_file} (exit {p.returncode})")


def upload_probe(node):
    """np-probe into the node's private state dir, its sha256 checked there."""
    local = np_probe()
    with open(local, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    dest = f"/run/network-performance/{node}/np-probe"
    with open(local, "rb") as f:
        p = _ssh(node, f"cat > {dest} && chmod 0700 {dest} && echo '{digest}  {dest}' | sha256sum -c --quiet", stdin=f)
    if p.returncode != 0:
        raise RuntimeError(f"{node}: upload of np-probe failed or is corrupt: {p.stderr.strip()}")
    print(f"{node}: np-probe uploaded, sha256 {digest[:12]}… checked")


def stop_probe(node, mode):
    """Stops the node's probe and brings its trace (np-trace/1) to the run dir."""
    out = os.path.join(run_dir(), f"{mode}_trace_{node}.json")
    with open(out, "wb") as f:
        p = _ssh(node, "sh", "-s", "--", "probe-stop", node, "--print-trace", stdin=node_steps(), stdout=f)
    if p.returncode != 0:
        raise RuntimeError(f"{node}: probe-stop: {p.stderr.decode().strip()}")
    print(p.stderr.decode().strip())
    return out


def outputs(mode):
    """The files a mode writes into the run dir, by role."""
    base = os.path.join(run_dir(), mode)
    return {"ping": f"{base}_ping.txt", "tcp": f"{base}_tcp.json", "udp": f"{base}_udp.json"}


def write_contract(mode, node_a, node_b):
    """np_contract_<mode>.json by `np-explain attach --mode`: the tutorial's figures from the
    tools' outputs, np-explain's explanation, and the traces of both nodes."""
    o = outputs(mode)
    args = ["attach", os.path.join(run_dir(), f"np_contract_{mode}.json"), "--mode", mode,
            "--node1", node_a, "--node2", node_b, "--ping", o["ping"], "--iperf3", o["tcp"],
            "--iperf3", o["udp"]]
    for n in (node_a, node_b):
        args += ["--trace", os.path.join(run_dir(), f"{mode}_trace_{n}.json")]
    rate = params()["np_link_rate_bps"]
    if rate:
        args += ["--link", str(int(rate))]
    print(cli(*args).stdout)
    return contract(mode)


def contract(mode):
    with open(os.path.join(run_dir(), f"np_contract_{mode}.json")) as f:
        return json.load(f)


def parity():
    """`np-explain parity` over the run dir: (passed, table)."""
    p = cli("parity", run_dir(), check=False)
    if p.returncode not in (0, 1):
        raise RuntimeError(p.stderr.strip())
    return p.returncode == 0, p.stdout


def teardown(node_a, node_b):
    iface = params()["np_data_iface"]
    for n in (node_a, node_b):
        step(n, "teardown", iface)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "contract":
        write_contract(*sys.argv[2:])
    else:
        sys.exit("usage: network-performance_lib.py contract MODE NODE_A NODE_B")
