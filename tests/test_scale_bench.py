"""bench/scale.py's pure parts: the power-law fit, the estimates and the plot (no timing asserted)."""

from __future__ import annotations

from bench.scale import curves, fit, plot


def test_fit_recovers_a_power_law_and_needs_two_points():
    a, b = fit([1e4, 3e4, 1e5], [2.0 * n ** 1.1 for n in (1e4, 3e4, 1e5)])
    assert abs(b - 1.1) < 1e-9 and abs(a - 2.0) < 1e-6
    assert fit([1e4], [5.0]) is None


def test_curves_and_plot(tmp_path):
    rows = [{"pages": n, "single": {"seconds": n / 100, "peak_rss_mb": 200 + n / 1000},
             "cluster_local2": {"seconds": n / 150 + 20}} for n in (10_000, 30_000, 100_000)]
    fits = curves(rows)
    assert fits["single.seconds"]["estimate_1M"] == 10_000 and fits["single.seconds"]["exponent"] == 1.0
    assert "cluster_local2.peak_rss_mb" not in fits  # not measured: not fitted
    plot(rows, fits, tmp_path / "scale.png")
    assert (tmp_path / "scale.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cpu_seconds_are_fitted_from_the_driver_and_its_children():
    rows = [{"pages": n, "single": {"seconds": n, "cpu_driver_s": n / 1000, "cpu_children_s": n / 250}}
            for n in (3_000, 10_000)]
    fits = curves(rows)
    assert fits["single.cpu_s"]["exponent"] == 1.0 and fits["single.cpu_s"]["estimate_1M"] == 5_000
    assert fits["single.seconds"]["estimate_1M"] == 1_000_000  # wall time is fitted on its own
