"""Files on disk: reading sessions, tailing them, watching folders, and the one append path."""
