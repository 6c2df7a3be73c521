#!/usr/bin/env python3
"""Writes a synthetic iperf3 -J document for the benchmark: a 1-hour TCP run with -P 8 and
0.1 s intervals (36,000 intervals of 8 streams + sum), in the layout iperf3 3.12 prints
(cJSON: tab indentation, a tab after each colon), with the fields of the real fixture
tests/fixtures/iperf3/tcp-100m-P4.json.

    python3 bench/gen_iperf3_json.py OUT.json [--seconds 3600] [--streams 8] [--interval 0.1]
"""
import argparse
import random

p = argparse.ArgumentParser()
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

with open(a.out, "w") as f:
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
