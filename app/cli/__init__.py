"""The command line: argument parsing and text/JSON output over the operations and the model."""
