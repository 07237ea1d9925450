"""The one benchmark harness: clock, memory probe, report, synthetic worlds, common arguments.

Every ``benchmarks/bench_*.py`` script builds on it; ``benchmarks/README.md`` states the
contract each script meets.
"""
