"""Test scaffolding shared by the test modules and the benchmarks: generators and helpers, no tests, no fixtures."""
