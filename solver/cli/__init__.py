"""The `rulebook` command line."""
