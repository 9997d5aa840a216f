"""`python -m hebatch.cli ...` runs the command line without the installed entry point."""

from . import main

main(prog_name="hebatch")
