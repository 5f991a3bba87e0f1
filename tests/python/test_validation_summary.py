#!/usr/bin/env python3
"""scripts/validation-summary.py's noise floor, hand-computed (ctest validate.summary_noise_floor).

noise_floor(points) is how many points a perfect prediction would still put over 10% from the
measurement's own run-to-run noise: per point the runs' median steps' range / d2(runs) is one
run's standard deviation (d2(3) = 1.693, d2(6) = 2.534), / sqrt(runs) the pooled median's, and
erfc(0.1 / (sd sqrt 2)) the normal probability of an error beyond 10%.
"""

import importlib.util
import math
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "validation_summary", os.path.join(_HERE, "..", "..", "scripts", "validation-summary.py"))
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)


def point(runs, lo, median, hi):
    return {"rows": [{"quantity": "step_time_s",
                      "spread": {"runs": runs, "min": lo, "median": median, "max": hi}}]}


def main():
    failures, checks = [], [0]

    def check(what, got, want, tol=1e-3):
        checks[0] += 1
        if abs(got - want) > tol:
            failures.append(f"{what}: got {got}, want {want}")

    # 3 runs 90..110 around 100: sd 20 / 1.693 / 100 / sqrt 3 = 0.06820; P(|e| > 0.1) =
    # erfc(0.1 / (0.06820 sqrt 2)) = erfc(1.0368) = 0.1426.
    total, n = summary.noise_floor([point(3, 0.090, 0.100, 0.110)])
    check("3 runs 90..110", total, 0.1426)
    check("counted", n, 1, 0)
    # 6 runs 95..105: sd 10 / 2.534 / 100 / sqrt 6 = 0.01611; z = 6.21: P ~ 5e-10.
    total, _ = summary.noise_floor([point(6, 0.095, 0.100, 0.105)])
    check("6 runs 95..105", total, 0.0, 1e-6)
    # Equal runs: no spread, no probability; one run (no range) and a point without the spread
    # are not counted; the sum adds the points.
    total, n = summary.noise_floor([point(3, 0.1, 0.1, 0.1), point(1, 0.1, 0.1, 0.1),
                                    {"rows": [{"quantity": "step_time_s"}]},
                                    point(3, 0.090, 0.100, 0.110), point(3, 0.090, 0.100, 0.110)])
    check("sum of two", total, 2 * 0.1426)
    check("counted of five", n, 3, 0)
    check("erfc by hand", math.erfc(0.1 / (20 / 1.693 / 100 / math.sqrt(3) * math.sqrt(2))),
          0.1426)
    if failures:
        print("\n".join(failures))
        return 1
    print(f"noise_floor: {checks[0]} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
