"""The benchmark: this project's arrival-driven runs against microbatch, a full refresh and a
hand-written floor, and where the time of a run goes (`late-data bench`, `make bench`).

Apart from the product package `late_data`, which it drives: nothing in `late_data` imports it
except the `bench` subcommand, lazily, so the product runs without the benchmark's code paths.
"""
