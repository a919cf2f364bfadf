"""The oracles: every result recomputed from the raw rows with the DataFrame API, independently of
the macros. What counts and the too-late reasons are written once (contract); fixed and sliding
windows (windows), sessions (sessions), dimensions at event time (dimensions).

May import: late_data.runtime.
"""
