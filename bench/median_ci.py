"""The median of per-round ratios with its uncertainty, for the probe benches.

A bench's rounds on a shared virtual machine spread far wider than the probe's effect (one
run's rounds from 0.85 to 1.10), so a median alone says little: median_ci gives the 95 %
percentile-bootstrap interval of the median (resampling the rounds, a fixed seed so a rerun of
the same figures prints the same interval). A median past a goal whose interval still straddles
it is one reading of a noisy machine: the runs that follow say whether it holds.
"""
import random
import statistics


def median_ci(values, level=0.95, resamples=4000, seed=1):
    """(median, low, high) of `values`."""
    xs = list(values)
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(resamples))
    tail = (1 - level) / 2
    return (statistics.median(xs), meds[int(tail * resamples)],
            meds[min(resamples - 1, int((1 - tail) * resamples))])


def describe(values):
    """'0.962 (95 % interval 0.951 .. 0.973; rounds 0.85 .. 1.10)'."""
    med, lo, hi = median_ci(values)
    return (f"{med:.3f} (95 % interval {lo:.3f} .. {hi:.3f}; "
            f"rounds {min(values):.2f} .. {max(values):.2f})")
