"""`late-data demo`: a generated scenario scheduled, checked and reported (demo), and its HTML
report (report).

May import: late_data.runtime, late_data.project, late_data.running, late_data.commands.
"""
