"""The ``locus`` command-line tool: run the stack on one machine, manage projects, scan, query."""
