#!/usr/bin/env python3
"""Writes the benchmark's synthetic inputs (scripts/bench.sh):

  json     an iperf3 -J document: a TCP run with -P 8 and 0.1 s intervals (3600 s: 36,000
           intervals of 8 streams + sum, ~108 MB), in the layout iperf3 3.12 prints (cJSON: tab
           indentation, a tab after each colon), with the fields of the real fixture
           tests/fixtures/iperf3/tcp-100m-P4.json
  ndjson   the same run as iperf3 3.17's --json-stream: one compact event per line
  iperf2   iperf 2.1's client text of a -P 8 -i INTERVAL TCP run: 8 stream lines and a [SUM] per
           interval, then the final reports (the layout of tests/fixtures/iperf2/tcp-100m-P4.client.txt)
  ping     iputils ping with one reply line per INTERVAL and its summary

    python3 bench/gen_inputs.py KIND OUT [--seconds 3600] [--streams 8] [--interval 0.1]
"""
import argparse
import json as jsonlib
import random

p = argparse.ArgumentParser()
p.add_argument("kind", choices=["json", "ndjson", "iperf2", "ping"])
p.add_argument("out")
p.add_argument("--seconds", type=float, default=3600)
p.add_argument("--streams", type=int, default=8)
p.add_argument("--interval", type=float, default=0.1)
a = p.parse_args()
rng = random.Random(42)
n = int(round(a.seconds / a.interval))
per_stream_bps = 941e6 / a.streams

STREAM = """{{
\t\t\t\t\t"socket":\t{sock},
\t\t\t\t\t"start":\t{start:.6f},
\t\t\t\t\t"end":\t{end:.6f},
\t\t\t\t\t"seconds":\t{secs:.17g},
\t\t\t\t\t"bytes":\t{bytes},
\t\t\t\t\t"bits_per_second":\t{bps:.17g},
\t\t\t\t\t"retransmits":\t{rtx},
\t\t\t\t\t"snd_cwnd":\t{cwnd},
\t\t\t\t\t"snd_wnd":\t{swnd},
\t\t\t\t\t"rtt":\t{rtt},
\t\t\t\t\t"rttvar":\t{rttvar},
\t\t\t\t\t"pmtu":\t1500,
\t\t\t\t\t"omitted":\tfalse,
\t\t\t\t\t"sender":\ttrue
\t\t\t\t}}"""
SUM = """{{
\t\t\t\t"start":\t{start:.6f},
\t\t\t\t"end":\t{end:.6f},
\t\t\t\t"seconds":\t{secs:.17g},
\t\t\t\t"bytes":\t{bytes},
\t\t\t\t"bits_per_second":\t{bps:.17g},
\t\t\t\t"retransmits":\t{rtx},
\t\t\t\t"omitted":\tfalse,
\t\t\t\t"sender":\ttrue
\t\t\t}}"""

def write_json(f):
        f.write('{\n\t"start":\t{\n\t\t"connected":\t[')
        f.write(", ".join('{\n\t\t\t\t"socket":\t%d,\n\t\t\t\t"local_host":\t"198.18.10.1",\n'
                          '\t\t\t\t"local_port":\t%d,\n\t\t\t\t"remote_host":\t"198.18.10.2",\n'
                          '\t\t\t\t"remote_port":\t5201\n\t\t\t}' % (5 + i, 40000 + i)
                          for i in range(a.streams)))
        f.write('],\n\t\t"version":\t"iperf 3.12",\n\t\t"system_info":\t"Linux bench",\n'
                '\t\t"timestamp":\t{\n\t\t\t"time":\t"Mon, 30 Nov 2026 12:00:00 GMT",\n'
                '\t\t\t"timesecs":\t1796040000\n\t\t},\n\t\t"connecting_to":\t{\n'
                '\t\t\t"host":\t"198.18.10.2",\n\t\t\t"port":\t5201\n\t\t},\n'
                '\t\t"cookie":\t"benchbenchbenchbenchbenchbenchbench1",\n'
                '\t\t"tcp_mss_default":\t1448,\n\t\t"target_bitrate":\t0,\n\t\t"sock_bufsize":\t0,\n'
                '\t\t"sndbuf_actual":\t16384,\n\t\t"rcvbuf_actual":\t131072,\n\t\t"test_start":\t{\n'
                '\t\t\t"protocol":\t"TCP",\n\t\t\t"num_streams":\t%d,\n\t\t\t"blksize":\t131072,\n'
                '\t\t\t"omit":\t0,\n\t\t\t"duration":\t%d,\n\t\t\t"bytes":\t0,\n\t\t\t"blocks":\t0,\n'
                '\t\t\t"reverse":\t0,\n\t\t\t"tos":\t0,\n\t\t\t"target_bitrate":\t0\n\t\t}\n\t},\n'
                '\t"intervals":\t[' % (a.streams, int(a.seconds)))
        total = [0] * a.streams
        for i in range(n):
            start, end = i * a.interval, (i + 1) * a.interval
            streams, sum_bytes = [], 0
            for s in range(a.streams):
                b = int(per_stream_bps * a.interval / 8 * rng.uniform(0.9, 1.1))
                total[s] += b
                sum_bytes += b
                streams.append(STREAM.format(sock=5 + s, start=start, end=end, secs=a.interval,
                                             bytes=b, bps=b * 8 / a.interval, rtx=rng.choice((0, 0, 0, 1)),
                                             cwnd=rng.randint(60000, 200000), swnd=3145728,
                                             rtt=rng.randint(200, 900), rttvar=rng.randint(5, 90)))
            f.write(("{\n\t\t\t\"streams\":\t[" if i == 0 else ", {\n\t\t\t\"streams\":\t[")
                    + ", ".join(streams) + "],\n\t\t\t\"sum\":\t"
                    + SUM.format(start=start, end=end, secs=a.interval, bytes=sum_bytes,
                                 bps=sum_bytes * 8 / a.interval, rtx=0) + "\n\t\t}")
        f.write("],\n\t\"end\":\t{\n\t\t\"streams\":\t[")
        ends = []
        for s in range(a.streams):
            ends.append('{\n\t\t\t\t"sender":\t{\n\t\t\t\t\t"socket":\t%d,\n\t\t\t\t\t"start":\t0,\n'
                        '\t\t\t\t\t"end":\t%g,\n\t\t\t\t\t"seconds":\t%g,\n\t\t\t\t\t"bytes":\t%d,\n'
                        '\t\t\t\t\t"bits_per_second":\t%.17g,\n\t\t\t\t\t"retransmits":\t0,\n'
                        '\t\t\t\t\t"sender":\ttrue\n\t\t\t\t},\n\t\t\t\t"receiver":\t{\n'
                        '\t\t\t\t\t"socket":\t%d,\n\t\t\t\t\t"start":\t0,\n\t\t\t\t\t"end":\t%g,\n'
                        '\t\t\t\t\t"seconds":\t%g,\n\t\t\t\t\t"bytes":\t%d,\n'
                        '\t\t\t\t\t"bits_per_second":\t%.17g,\n\t\t\t\t\t"sender":\ttrue\n\t\t\t\t}\n\t\t\t}'
                        % (5 + s, a.seconds, a.seconds, total[s], total[s] * 8 / a.seconds,
                           5 + s, a.seconds, a.seconds, total[s], total[s] * 8 / a.seconds))
        grand = sum(total)
        f.write(", ".join(ends))
        for key in ("sum_sent", "sum_received"):
            f.write('],\n\t\t"%s":\t{\n\t\t\t"start":\t0,\n\t\t\t"end":\t%g,\n\t\t\t"seconds":\t%g,\n'
                    '\t\t\t"bytes":\t%d,\n\t\t\t"bits_per_second":\t%.17g,\n%s\t\t\t"sender":\ttrue\n\t\t}'
                    % (key, a.seconds, a.seconds, grand, grand * 8 / a.seconds,
                       '\t\t\t"retransmits":\t0,\n' if key == "sum_sent" else "")
                    if key == "sum_sent" else
                    ',\n\t\t"%s":\t{\n\t\t\t"start":\t0,\n\t\t\t"end":\t%g,\n\t\t\t"seconds":\t%g,\n'
                    '\t\t\t"bytes":\t%d,\n\t\t\t"bits_per_second":\t%.17g,\n\t\t\t"sender":\ttrue\n\t\t}'
                    % (key, a.seconds, a.seconds, grand, grand * 8 / a.seconds))
        f.write(',\n\t\t"cpu_utilization_percent":\t{\n\t\t\t"host_total":\t12.5,\n'
                '\t\t\t"host_user":\t0.5,\n\t\t\t"host_system":\t12,\n\t\t\t"remote_total":\t30.1,\n'
                '\t\t\t"remote_user":\t1.1,\n\t\t\t"remote_system":\t29\n\t\t},\n'
                '\t\t"sender_tcp_congestion":\t"cubic",\n\t\t"receiver_tcp_congestion":\t"cubic"\n\t}\n}\n')


def write_ndjson(f):
    def event(name, data):
        f.write(jsonlib.dumps({"event": name, "data": data}, separators=(",", ":")) + "\n")
    event("start", {
        "connected": [{"socket": 5 + i, "local_host": "198.18.10.1", "local_port": 40000 + i,
                       "remote_host": "198.18.10.2", "remote_port": 5201}
                      for i in range(a.streams)],
        "version": "iperf 3.17.1", "system_info": "Linux bench",
        "connecting_to": {"host": "198.18.10.2", "port": 5201}, "tcp_mss_default": 1448,
        "target_bitrate": 0, "sndbuf_actual": 16384, "rcvbuf_actual": 131072,
        "test_start": {"protocol": "TCP", "num_streams": a.streams, "blksize": 131072, "omit": 0,
                       "duration": int(a.seconds), "bytes": 0, "blocks": 0, "reverse": 0,
                       "tos": 0, "target_bitrate": 0, "bidir": 0, "fqrate": 0,
                       "interval": a.interval}})
    total = [0] * a.streams
    for i in range(n):
        start, end = i * a.interval, (i + 1) * a.interval
        streams = []
        for s in range(a.streams):
            b = int(per_stream_bps * a.interval / 8 * rng.uniform(0.9, 1.1))
            total[s] += b
            streams.append({"socket": 5 + s, "start": start, "end": end, "seconds": a.interval,
                            "bytes": b, "bits_per_second": b * 8 / a.interval,
                            "retransmits": rng.choice((0, 0, 0, 1)),
                            "snd_cwnd": rng.randint(60000, 200000), "snd_wnd": 3145728,
                            "rtt": rng.randint(200, 900), "rttvar": rng.randint(5, 90),
                            "pmtu": 1500, "omitted": False, "sender": True})
        sb = sum(x["bytes"] for x in streams)
        event("interval", {"streams": streams, "sum": {
            "start": start, "end": end, "seconds": a.interval, "bytes": sb,
            "bits_per_second": sb * 8 / a.interval, "retransmits": 0, "omitted": False,
            "sender": True}})
    grand = sum(total)
    summary = {"start": 0, "end": a.seconds, "seconds": a.seconds, "bytes": grand,
               "bits_per_second": grand * 8 / a.seconds, "sender": True}
    event("end", {"streams": [{"sender": dict(summary, bytes=t, bits_per_second=t * 8 / a.seconds),
                               "receiver": dict(summary, bytes=t, bits_per_second=t * 8 / a.seconds)}
                              for t in total],
                  "sum_sent": dict(summary, retransmits=0), "sum_received": summary,
                  "cpu_utilization_percent": {"host_total": 12.5, "remote_total": 30.1}})


def iperf_bytes(b):  # iperf's 3-significant-digit transfer column, binary units
    for unit, scale in (("GBytes", 2**30), ("MBytes", 2**20), ("KBytes", 2**10), ("Bytes", 1)):
        if b >= scale:
            v = b / scale
            break
    return ("%4.2f" if v < 9.995 else "%4.1f" if v < 99.95 else "%4.0f") % v + " " + unit


def iperf_rate(bps):
    for unit, scale in (("Gbits/sec", 1e9), ("Mbits/sec", 1e6), ("Kbits/sec", 1e3)):
        if bps >= scale:
            v = bps / scale
            break
    return ("%4.2f" if v < 9.995 else "%4.1f" if v < 99.95 else "%4.0f") % v + " " + unit


def write_iperf2(f):
    f.write("------------------------------------------------------------\n"
            "Client connecting to 198.18.10.2, TCP port 5001\n"
            "TCP window size: 16.0 KByte (default)\n"
            "------------------------------------------------------------\n")
    for s in range(a.streams):
        f.write("[%3d] local 198.18.10.1 port %d connected with 198.18.10.2 port 5001\n"
                % (s + 1, 40000 + s))
    f.write("[ ID] Interval       Transfer     Bandwidth\n")
    total = [0] * a.streams
    out = []
    for i in range(n):
        start, end = i * a.interval, (i + 1) * a.interval
        sb = 0
        for s in range(a.streams):
            b = per_stream_bps * a.interval / 8 * rng.uniform(0.9, 1.1)
            total[s] += b
            sb += b
            out.append("[%3d] %.4f-%.4f sec  %s  %s\n" % (s + 1, start, end, iperf_bytes(b),
                                                        iperf_rate(b * 8 / a.interval)))
        out.append("[SUM] %.4f-%.4f sec  %s  %s\n" % (start, end, iperf_bytes(sb),
                                                     iperf_rate(sb * 8 / a.interval)))
        if len(out) > 10000:
            f.write("".join(out))
            out.clear()
    f.write("".join(out))
    for s in range(a.streams):
        f.write("[%3d] 0.0000-%.4f sec  %s  %s\n" % (s + 1, a.seconds, iperf_bytes(total[s]),
                                                    iperf_rate(total[s] * 8 / a.seconds)))
    f.write("[SUM] 0.0000-%.4f sec  %s  %s\n" % (a.seconds, iperf_bytes(sum(total)),
                                                iperf_rate(sum(total) * 8 / a.seconds)))


def write_ping(f):
    f.write("PING 198.18.10.2 (198.18.10.2) 56(84) bytes of data.\n")
    out = []
    rtts = []
    for i in range(1, n + 1):
        r = round(rng.uniform(0.04, 0.2), 3)
        rtts.append(r)
        out.append("64 bytes from 198.18.10.2: icmp_seq=%d ttl=64 time=%.3f ms\n" % (i, r))
        if len(out) > 10000:
            f.write("".join(out))
            out.clear()
    f.write("".join(out))
    avg = sum(rtts) / n
    f.write("\n--- 198.18.10.2 ping statistics ---\n"
            "%d packets transmitted, %d received, 0%% packet loss, time %dms\n"
            "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n"
            % (n, n, int(a.seconds * 1000), min(rtts), avg, max(rtts), 0.01))


with open(a.out, "w") as f:
    {"json": write_json, "ndjson": write_ndjson, "iperf2": write_iperf2, "ping": write_ping}[a.kind](f)
