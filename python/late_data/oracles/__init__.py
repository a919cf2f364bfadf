"""The oracles: every result recomputed from the raw rows with the DataFrame API, independently of
the macros. What counts and the too-late reasons are written once (contract); any pipeline's fixed
and sliding windows (windows), sessions (sessions), dimensions at event time (dimensions), the
demo's two pipelines by hand (demo_pipelines), and how an oracle's windows are compared with a
table's (compare).

May import: late_data.runtime.
"""
