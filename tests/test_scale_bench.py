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
