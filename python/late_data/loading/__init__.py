"""Loading a pipeline's source from files: each file read and checked against the source table
(files), and the inbox that hands files to the process holding the project, which loads them
between its runs, stamped and exactly once (inbox).

May import: late_data.runtime.
"""
