"""The things a user does to a session, once for the CLI and the TUI: jump, label, migrate, export."""
