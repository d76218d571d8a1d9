"""The benchmark harness behind bench/run.py: columns, benchmarks, measurement, report."""
